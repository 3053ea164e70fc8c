"""gunicorn's sync worker, refusing new connections the moment it is told to stop.

All of a node's workers accept from one listening socket, each holding a descriptor of it;
the kernel keeps it listening while any descriptor is open. On SIGTERM gunicorn's master
closes its own and signals the workers, and a sync worker then finishes the request in
hand before it exits: until the last one has, the socket still listens, and a load
balancer's probe or a client's request lands in its backlog only to be reset when the
node is gone, after waiting out the slowest request in flight (a /health probe waits
the slowest request in flight). Here a stopping worker
lets go of its descriptor at once, so the node refuses new connections within the signal
(HAProxy and clients retry another node at once) and still answers the requests in hand.

Only this process's descriptor is replaced, never the socket itself shut (`shutdown`): a worker
stopped alone (fewer workers, a reload) leaves its siblings listening.
tests/e2e/test_server_stop.py fails loudly should a gunicorn upgrade change what this
relies on (`handle_exit` on SIGTERM, `accept` per connection, `sockets`).
"""

import errno
import os
import socket

from gunicorn.workers.sync import StopWaiting, SyncWorker


class RefusingSyncWorker(SyncWorker):
    """`worker_class` of gunicorn.conf.py."""

    def handle_exit(self, sig, frame) -> None:
        super().handle_exit(sig, frame)  # finish the request in hand, accept no other
        for listener in self.sockets:
            # A socket that listens to nothing takes the listener's descriptor: this
            # process lets go of the listening socket at once, while the objects gunicorn
            # keeps for it stay valid (a worker told to stop while it boots still calls
            # setblocking on them; a closed one raised there).
            with socket.socket(listener.family, listener.type) as idle:
                os.dup2(idle.fileno(), listener.fileno())

    def accept(self, listener) -> None:
        try:
            super().accept(listener)
        except OSError:
            if self.alive:
                raise
            # The listener went between the loop's check and this accept: leave the way
            # gunicorn leaves when no connection waits (its loop then sees alive off).
            raise BlockingIOError(errno.EAGAIN, "stopping") from None

    def wait(self, timeout):
        if not self.alive:
            raise StopWaiting  # the loop's own way out
        return super().wait(timeout)
