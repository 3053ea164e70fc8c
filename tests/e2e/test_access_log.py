"""gunicorn's access log, when someone turns it on, writes no query string: OrderList's
?lastName= carries surnames (issue 14 item 11). The app's own JSON line is the request
log and carries none either."""

import pytest
import requests

from tests.e2e.servers import base_env, gunicorn, manage

pytestmark = pytest.mark.e2e


def test_the_access_log_leaves_out_query_strings_and_referers(tmp_path):
    env = base_env(AIRLINE_ENV="development", AIRLINE_VAR_DIR=str(tmp_path))
    manage(env, "migrate", "--noinput")

    with gunicorn(env, tmp_path / "g.log", args=("--access-logfile", "-")) as server:
        # Unauthenticated, so no data is needed: the line is logged all the same.
        response = requests.get(
            server.url + "/json/v1/orders",
            params={"lastName": "Zyxwaldsurname", "firstName": "Qwertyname"},
            headers={
                "Authorization": "Bearer not-a-token",
                "Referer": "https://agency.example/search?lastName=Zyxwaldsurname",
            },
            timeout=10,
        )
        assert response.status_code == 401, response.text

    output = server.output()
    assert '"GET /json/v1/orders HTTP/1.1" 401' in output  # the access log line is there
    assert "Zyxwaldsurname" not in output
    assert "Qwertyname" not in output
    assert "not-a-token" not in output
