"""The airline's network: stations, fleet, the schedule and the seat inventory of every
flight-date leg (DESIGN.md §6).

It is one module because Django keeps an app's models in models.py and these tables
refer to one another (legs, their inventory, schedule loads and changes); the rules
that write them are in services.py and inventory.py.
"""

from collections.abc import Iterable

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.models import F, Q
from django.db.models.signals import post_delete, post_save


class CabinCode(models.TextChoices):
    """Cabin type codes of SPEC.md §1."""

    ECONOMY = "Y", "Economy"
    PREMIUM_ECONOMY = "W", "Premium Economy"
    BUSINESS = "C", "Business"
    FIRST = "F", "First"


class Station(models.Model):
    """An airport, as the airportsdata package describes it (never hand-written)."""

    code = models.CharField(max_length=3, primary_key=True)
    name = models.CharField(max_length=120)
    city = models.CharField(max_length=80)
    country = models.CharField(max_length=2)
    time_zone = models.CharField(max_length=64, help_text="IANA time zone, e.g. America/New_York")
    latitude = models.FloatField()
    longitude = models.FloatField()

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code} {self.city}"


class AircraftType(models.Model):
    """An aircraft type: its IATA code (as in SSIM) and the carrier's own code."""

    iata_code = models.CharField(max_length=3, unique=True)
    carrier_code = models.CharField(max_length=10, blank=True)
    name = models.CharField(max_length=60)

    class Meta:
        ordering = ["iata_code"]

    def __str__(self) -> str:
        return f"{self.iata_code} {self.name}"


class SeatConfiguration(models.Model):
    """One cabin arrangement of an aircraft type; `code` is the SSIM aircraft
    configuration it is filed under (e.g. C12Y138)."""

    aircraft_type = models.ForeignKey(
        AircraftType, on_delete=models.PROTECT, related_name="configurations"
    )
    code = models.CharField(max_length=20)
    name = models.CharField(max_length=60, blank=True)
    blocked_seats = models.JSONField(
        default=list,
        blank=True,
        help_text='Seats never sold, e.g. ["12A", "12F"] (crew rest, inoperative)',
    )

    class Meta:
        ordering = ["aircraft_type", "code"]
        constraints = [
            models.UniqueConstraint(
                fields=["aircraft_type", "code"], name="one_configuration_code_per_type"
            )
        ]

    def __str__(self) -> str:
        return f"{self.aircraft_type.iata_code} {self.code}"


class CabinLayout(models.Model):
    """The rows and seats of one cabin of a configuration. `seat_letters` lists the seats
    of a row left to right with a space for each aisle: "ABC DEF"."""

    configuration = models.ForeignKey(
        SeatConfiguration, on_delete=models.CASCADE, related_name="cabins"
    )
    cabin = models.CharField(max_length=1, choices=CabinCode.choices)
    name = models.CharField(max_length=40)
    first_row = models.PositiveSmallIntegerField()
    last_row = models.PositiveSmallIntegerField()
    seat_letters = models.CharField(max_length=16)
    skipped_rows = models.JSONField(
        default=list, blank=True, help_text="Row numbers not used, e.g. [13]"
    )
    exit_rows = models.JSONField(default=list, blank=True)
    extra_legroom_rows = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["configuration", "first_row"]
        constraints = [
            models.UniqueConstraint(fields=["configuration", "cabin"], name="one_layout_per_cabin"),
            models.CheckConstraint(
                condition=Q(last_row__gte=F("first_row")), name="cabin_rows_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.configuration} {self.cabin} rows {self.first_row}-{self.last_row}"


class BookingClass(models.Model):
    """One step of a cabin's nested booking-class ladder. Rank 0 is the cabin's top class
    and may sell the whole cabin; each lower class may sell at most `authorized_percent`
    of it, nested (seats sold low count against every class above)."""

    cabin = models.CharField(max_length=1, choices=CabinCode.choices)
    rbd = models.CharField(max_length=1, unique=True)
    rank = models.PositiveSmallIntegerField()
    authorized_percent = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["cabin", "rank"]
        verbose_name_plural = "booking classes"
        constraints = [
            models.UniqueConstraint(fields=["cabin", "rank"], name="one_booking_class_per_rank"),
            models.CheckConstraint(
                condition=Q(authorized_percent__gt=0, authorized_percent__lte=100),
                name="authorized_is_a_percent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cabin}/{self.rbd} ({self.authorized_percent}%)"


class ScheduleLoad(models.Model):
    """One `load_schedule` run; the newest id is the schedule version each worker's
    in-memory itinerary index compares itself with (airline/network/itineraries.py)."""

    carrier = models.CharField(max_length=3)
    file_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    loaded_at = models.DateTimeField()
    legs_created = models.PositiveIntegerField(default=0)
    legs_updated = models.PositiveIntegerField(default=0)
    legs_removed = models.PositiveIntegerField(default=0)
    legs_kept_with_sales = models.PositiveIntegerField(default=0)
    flights_removed = models.JSONField(
        default=list, blank=True, help_text='Flight-date legs deleted: "MX101 2026-06-01 PVD-CHS"'
    )
    flights_kept_with_sales = models.JSONField(
        default=list,
        blank=True,
        help_text="Flight-date legs dropped by the file but kept, cancelled, for their bookings",
    )

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.carrier} {self.file_name} at {self.loaded_at:%Y-%m-%d %H:%M}"


class ScheduleJob(models.Model):
    """A schedule file queued from the back office for the worker to load (a large load
    takes longer than a request may), with the progress the back office shows."""

    class Status(models.TextChoices):
        QUEUED = "QUEUED", "Queued"
        RUNNING = "RUNNING", "Loading"
        LOADED = "LOADED", "Loaded"
        FAILED = "FAILED", "Not loaded, nothing changed"

    file_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    text = models.TextField(help_text="The file, until it is loaded")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=100, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    queued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    queued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    # Written every second while a worker loads it: a RUNNING job whose heartbeat is old
    # was left by a worker that died, its transaction rolled back; another takes it up.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    load = models.ForeignKey(
        ScheduleLoad, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["-queued_at", "-id"]
        indexes = [models.Index(fields=["status", "queued_at"], name="schedule_job_queue")]

    def __str__(self) -> str:
        return f"{self.file_name} ({self.get_status_display()})"


class ScheduleFollowUp(models.Model):
    """The bookings on the flight-date legs a schedule change wrote, told of it after the
    change commits: a snapshot of who held seats on those legs at commit
    (ScheduleFollowUpHolder), worked through in batches by the worker or
    `load_schedule --wait` (airline/network/follow_up.py), each batch one short
    transaction that moves `cursor` with what it told, so every holder is told exactly
    once, and a batch lost with its process is taken again from the cursor."""

    load = models.OneToOneField(
        ScheduleLoad,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="follow_up",
    )
    created_at = models.DateTimeField(help_text="When the schedule change committed")
    legs = models.PositiveIntegerField(default=0, help_text="Flight-date legs changed")
    total = models.PositiveIntegerField(default=0, help_text="Bookings to tell")
    done = models.PositiveIntegerField(default=0, help_text="Bookings told")
    changes = models.PositiveIntegerField(
        default=0, help_text="Airline changes recorded or brought up to date"
    )
    # The last ScheduleFollowUpHolder told: rows are written in the order they are told.
    cursor = models.BigIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(
                fields=["id"],
                condition=models.Q(finished_at__isnull=True),
                name="follow_up_open",
            )
        ]

    def __str__(self) -> str:
        return f"follow-up {self.pk}: {self.done} of {self.total} bookings told"


class ScheduleFollowUpHolder(models.Model):
    """One holder (a booking) to tell of a schedule change: `kind` names the registered
    LegHolders (airline.network.follow_up) that knows it by `holder_id`."""

    follow_up = models.ForeignKey(ScheduleFollowUp, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20)
    holder_id = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["follow_up", "kind", "holder_id"], name="follow_up_holder_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.holder_id}"


class ScheduledLeg(models.Model):
    """One SSIM flight leg record: a leg of a flight over a period, on some weekdays."""

    carrier = models.CharField(max_length=3)
    flight_number = models.PositiveSmallIntegerField()
    suffix = models.CharField(max_length=1, blank=True)
    itinerary_variation = models.PositiveSmallIntegerField()
    leg_sequence = models.PositiveSmallIntegerField()
    service_type = models.CharField(max_length=1)
    period_start = models.DateField()
    period_end = models.DateField()
    days_of_operation = models.CharField(
        max_length=7, help_text="ISO weekdays, e.g. 12345 for Mon-Fri"
    )
    frequency_rate = models.PositiveSmallIntegerField(default=1)
    origin = models.ForeignKey(Station, on_delete=models.PROTECT, related_name="+")
    destination = models.ForeignKey(Station, on_delete=models.PROTECT, related_name="+")
    departure_time = models.TimeField(help_text="Passenger STD, local to the origin")
    arrival_time = models.TimeField(help_text="Passenger STA, local to the destination")
    aircraft_type = models.ForeignKey(AircraftType, on_delete=models.PROTECT, related_name="+")
    configuration = models.ForeignKey(SeatConfiguration, on_delete=models.PROTECT, related_name="+")
    govt_approval_disclosure = models.CharField(max_length=200, blank=True)
    source_line = models.PositiveIntegerField(help_text="Line of the SSIM file it came from")
    # What the record files (schedule_diff.record_fingerprint): a load diffs only the
    # flights whose records' fingerprints differ from the file's.
    fingerprint = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        ordering = ["carrier", "flight_number", "period_start", "leg_sequence"]

    def __str__(self) -> str:
        flight = f"{self.carrier}{self.flight_number}"
        return f"{flight} leg {self.leg_sequence} {self.period_start}..{self.period_end}"


class FlightLeg(models.Model):
    """A leg of a flight on one date: what is flown, and what seats are sold on.

    `flight_date` is the local date of the flight's first departure (SSIM's flight date);
    times are stored in UTC and shown in each station's own time zone."""

    carrier = models.CharField(max_length=3)
    flight_number = models.PositiveSmallIntegerField()
    flight_date = models.DateField()
    leg_sequence = models.PositiveSmallIntegerField()
    origin = models.ForeignKey(Station, on_delete=models.PROTECT, related_name="+")
    destination = models.ForeignKey(Station, on_delete=models.PROTECT, related_name="+")
    departs_at = models.DateTimeField()
    arrives_at = models.DateTimeField()
    aircraft_type = models.ForeignKey(AircraftType, on_delete=models.PROTECT, related_name="+")
    configuration = models.ForeignKey(SeatConfiguration, on_delete=models.PROTECT, related_name="+")
    service_type = models.CharField(max_length=1, default="J")
    govt_approval_disclosure = models.CharField(max_length=200, blank=True)
    is_cancelled = models.BooleanField(
        default=False, help_text="Dropped by a newer schedule while it still had sales"
    )

    class Meta:
        ordering = ["departs_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["carrier", "flight_number", "flight_date", "leg_sequence"],
                name="one_leg_per_flight_date",
            ),
            models.CheckConstraint(
                condition=Q(arrives_at__gt=F("departs_at")), name="leg_arrives_after_departing"
            ),
        ]
        indexes = [
            models.Index(fields=["origin", "departs_at"], name="leg_by_origin_time"),
            # The back office's legs list pages in this order: an index walk
            # and a LIMIT, never a sort of every flight-date leg.
            models.Index(fields=["departs_at", "id"], name="leg_by_departure"),
            # The few legs the schedule cancelled under their bookings: the bookings
            # list flags (and filters) bookings on them, reading this instead of a scan of
            # every leg at each page view.
            models.Index(fields=["id"], condition=Q(is_cancelled=True), name="leg_cancelled"),
        ]

    def __str__(self) -> str:
        flight = f"{self.carrier}{self.flight_number}"
        return f"{flight} {self.flight_date} {self.origin_id}-{self.destination_id}"


class LegInventory(models.Model):
    """Seats of one booking class on one flight-date leg, nested (DESIGN.md §6).

    `authorized` is how many seats this class and every class below it may sell together;
    `sold` is how many they have sold. Rank 0's `authorized` is the cabin's capacity, so
    its `sold` is the cabin's sold count. Selling in class k adds to `sold` of ranks 0..k.
    """

    leg = models.ForeignKey(FlightLeg, on_delete=models.CASCADE, related_name="inventory")
    cabin = models.CharField(max_length=1, choices=CabinCode.choices)
    rbd = models.CharField(max_length=1)
    rank = models.PositiveSmallIntegerField()
    authorized = models.PositiveIntegerField()
    sold = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["leg", "cabin", "rank"]
        verbose_name_plural = "leg inventory"
        indexes = [
            # CabinLoad's rows read from the index alone, in leg order (PostgreSQL; other
            # databases keep the partial index without its included columns).
            models.Index(
                fields=["leg"],
                include=["sold", "authorized"],
                condition=Q(rank=0),
                name="cabin_rows",
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["leg", "rbd"], name="one_inventory_row_per_class"),
            # The invariant no concurrent sale may break, whatever the code above it does.
            models.CheckConstraint(
                condition=Q(sold__lte=F("authorized")), name="never_sold_beyond_authorized"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.leg} {self.rbd}: {self.sold}/{self.authorized}"


class CabinLoad(models.Model):
    """A leg's seats and sales over its cabins (rank-0 inventory, which every sale counts
    against) and its load factor, as the view `network_cabinload` sums them: read-only.

    The back office sorts the flight-date legs by these. Sorted through one join to the
    view (an aggregate over an index), the whole schedule's loads cost one pass; as a
    subquery per leg they cost 58,410 lookups, about a second at airline size.
    A leg without inventory has no row."""

    leg = models.OneToOneField(
        FlightLeg,
        primary_key=True,
        on_delete=models.DO_NOTHING,
        related_name="cabin_load",
        db_column="leg_id",
    )
    seats = models.IntegerField()
    sold = models.IntegerField()
    load = models.FloatField(null=True)  # percent; none for a leg of no seats

    class Meta:
        managed = False
        db_table = "network_cabinload"

    def __str__(self) -> str:
        return f"leg {self.leg_id}: {self.sold}/{self.seats}"


class NetworkVersion(models.Model):
    """The version of what every worker's in-memory itinerary index is built from: the
    schedule, stations, aircraft types and seat configurations (airline/network/
    itineraries.py). One row, bumped in the transaction of every change to those (the
    signals below, and a schedule load with the legs it wrote), so a change commits with
    its version and its NetworkChange row, and the version never runs ahead of the data.

    A counter in one row rather than the newest id of a table: ids are drawn before
    commit, so a later id can commit first and a worker that saw it would never notice
    the earlier one; bumps of one row queue on its lock and commit in order, so a worker
    that reads version N then finds every change log row up to N committed."""

    number = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"network version {self.number}"

    @classmethod
    def bump(cls, *, leg_ids: Iterable[int] = (), full: bool = False) -> int:
        """Move the version on and log what moved it, inside the caller's transaction;
        returns the new number. `leg_ids`: the flight legs written (created, updated,
        cancelled or deleted); none for reference data (stations, fleet, seats). More than
        CHANGE_LOG_MAX_LEGS are logged as `full`: workers rebuild instead of patching."""
        table = connection.ops.quote_name(cls._meta.db_table)
        with connection.cursor() as cursor:
            # An upsert: the row is made by the migration, but a flushed test database has none.
            cursor.execute(
                f"INSERT INTO {table} (id, number) VALUES (1, 1) "  # noqa: S608
                f"ON CONFLICT (id) DO UPDATE SET number = {table}.number + 1 RETURNING number"
            )
            number = cursor.fetchone()[0]
        ids = sorted(set(leg_ids))
        if full or len(ids) > CHANGE_LOG_MAX_LEGS:
            full, ids = True, []
        NetworkChange.objects.create(version=number, leg_ids=ids, full=full)
        if number % CHANGE_LOG_PRUNE_EVERY == 0:
            # Under the version row's lock, so prunes never race each other. A worker
            # whose index is older than the oldest row left rebuilds in full.
            NetworkChange.objects.filter(version__lte=number - CHANGE_LOG_KEEP).delete()
        return number

    @classmethod
    def current(cls, *, using: str | None = None) -> int:
        """The version now, read from `using` (the primary unless named): one primary-key
        read. It runs on every price, booking and order retrieve, so in SQL of its own:
        building it as a queryset cost the request several times the round trip."""
        database = connections[using or DEFAULT_DB_ALIAS]
        table = database.ops.quote_name(cls._meta.db_table)
        with database.cursor() as cursor:
            cursor.execute(f"SELECT number FROM {table} WHERE id = 1")  # noqa: S608
            row = cursor.fetchone()
        return row[0] if row else 0


CHANGE_LOG_MAX_LEGS = 10_000  # beyond this a change is logged `full`: a rebuild is cheaper
CHANGE_LOG_KEEP = 5_000  # versions of log kept; a worker further behind rebuilds in full
CHANGE_LOG_PRUNE_EVERY = 100  # versions between prunes


class NetworkChange(models.Model):
    """What moved the network to `version`: the flight legs written, so each worker patches
    its index with those legs only (itineraries.NetworkIndex.with_changes); none for a
    reference data edit; `full` when too many to list (the worker rebuilds)."""

    version = models.PositiveBigIntegerField(db_index=True)
    leg_ids = models.JSONField(default=list, blank=True)
    full = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["version"]

    def __str__(self) -> str:
        what = "full" if self.full else f"{len(self.leg_ids)} legs"
        return f"network version {self.version}: {what}"


# Every save or delete of reference data the index holds moves the version (admin edits
# included: an aircraft type's carrier code, a seat configuration, a station's time zone).
# Flight legs are written in bulk, which sends no signals: the one that writes them, a
# schedule load, bumps with the legs it wrote (services.schedule_load).
INDEXED_MODELS = (Station, AircraftType, SeatConfiguration, CabinLayout)

# What a schedule load writes in bulk (tens of thousands of legs, hundreds of thousands of
# inventory rows): the tables analysed once it commits (airline.sql.analyze).
SCHEDULE_LOAD_MODELS = (ScheduleLoad, ScheduledLeg, FlightLeg, LegInventory)


def _network_changed(sender, **kwargs) -> None:
    NetworkVersion.bump()


for _model in INDEXED_MODELS:
    post_save.connect(_network_changed, sender=_model, dispatch_uid=f"version-{_model.__name__}")
    post_delete.connect(
        _network_changed, sender=_model, dispatch_uid=f"version-del-{_model.__name__}"
    )
