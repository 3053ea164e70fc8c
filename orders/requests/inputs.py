"""Typed input of create order (SPEC.md §2.5.1, §4.7; DESIGN.md §11) and change order
(§4.10): the values `orders.booking.create.order_create` books from and
`orders.servicing.changes.order_change` changes with, whatever channel the request came by.

Each channel builds these from its own wire shape: the JSON API in
`orders.requests.serializers.CreateOrderIn.to_create_input`, NDC/XML from OrderCreateRQ. They
carry what the client sent, shaped but not yet judged: the rules that span fields or need
the priced offer (party, ages, infants, cards, credits) are applied by `orders.requests.checks`,
`orders.money.payments` and `orders.booking`, the same for every channel.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import ClassVar, TypedDict


@dataclass(frozen=True)
class ItemSelection:
    """An offerItemSelections entry: the passengers an offer item is booked for (None:
    every passenger it was priced for)."""

    offer_item_id: str
    passenger_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class PostalAddress:
    line1: str
    city: str
    country_code: str
    line2: str = ""
    state_province: str = ""
    postal_code: str = ""

    def wire(self) -> dict[str, str]:
        """The address as the order stores and shows it (SPEC.md field names)."""
        fields = {
            "line1": self.line1,
            "line2": self.line2,
            "city": self.city,
            "stateProvince": self.state_province,
            "postalCode": self.postal_code,
            "countryCode": self.country_code,
        }
        return {name: value for name, value in fields.items() if value}


@dataclass(frozen=True)
class LoyaltyProgram:
    account_number: str
    program_code: str = ""
    tier_level: str = ""

    def wire(self) -> dict[str, str]:
        """The membership as the order stores and shows it."""
        fields = {
            "programCode": self.program_code,
            "accountNumber": self.account_number,
            "tierLevel": self.tier_level,
        }
        return {name: value for name, value in fields.items() if value}


# Travel document types as an order keeps and shows them (SPEC.md §2.5.1), and the codes
# partners' systems send for them, most often those of SSR DOCS and APIS (P, PP, I, ID,
# V): taken alike in JSON and NDC, kept as the type they stand for.
DOCUMENT_TYPES = ("PT", "NI", "DL", "VI", "RP")
DOCUMENT_TYPE_ALIASES = {"P": "PT", "PP": "PT", "PA": "PT", "I": "NI", "ID": "NI", "V": "VI"}


@dataclass(frozen=True)
class TravelDocument:
    document_type: str  # PT passport, NI national id, DL, VI visa, RP residence permit
    document_number: str
    issuing_country: str = ""
    nationality: str = ""
    expiry_date: date | None = None

    def wire(self) -> dict[str, str]:
        """The document as the order stores and shows it (dates as ISO strings)."""
        fields = {
            "documentType": self.document_type,
            "documentNumber": self.document_number,
            "issuingCountry": self.issuing_country,
            "nationality": self.nationality,
            "expiryDate": self.expiry_date.isoformat() if self.expiry_date else "",
        }
        return {name: value for name, value in fields.items() if value}


@dataclass(frozen=True)
class PassengerData:
    """A passenger as the request named them; `passenger_id` is the priced offer's paxId
    (DESIGN.md §11), `infant_passenger_id` on an adult the infant on their lap."""

    passenger_id: str
    ptc: str  # ADT, CHD, INF
    given_name: str
    surname: str
    date_of_birth: date | None = None
    gender: str = ""  # Male or Female
    nationality: str = ""
    residence_country: str = ""
    loyalty_program: LoyaltyProgram | None = None
    travel_documents: tuple[TravelDocument, ...] = ()
    email: str = ""  # the passenger's own contact, when given
    phone: str = ""
    infant_passenger_id: str = ""


@dataclass(frozen=True)
class ContactData:
    """The booking contact as sent; an empty name defaults to the lead passenger's."""

    email: str
    phone: str = ""
    given_name: str = ""
    surname: str = ""
    postal_address: PostalAddress | None = None


@dataclass(frozen=True)
class Hold:
    """Book now, pay by the payment time limit (DESIGN.md §8)."""


@dataclass(frozen=True)
class StatedAmount:
    """The amount a payment says it pays (NDC PaymentProcessingDetails/Amount, JSON
    `payment.amount`): it must be what is due (orders.requests.checks.check_amount_stated)."""

    amount: Decimal
    currency: str


@dataclass(frozen=True)
class CardPayment:
    """A credit card payment as sent (SPEC.md §2.5.1): checked by
    `orders.money.payments.card_check`; the number and security code are never kept."""

    card_type: str
    card_number: str = field(repr=False)
    expiry_date: str  # MMYY
    security_code: str = field(repr=False)
    payer_given_name: str = ""
    payer_surname: str = ""
    payer_address: PostalAddress | None = None
    amount: StatedAmount | None = None  # None: whatever is due


@dataclass(frozen=True)
class CreditPayment:
    """Airline credit (DESIGN.md §11 "Airline credit"), and the card that pays what the
    credit does not cover, when it may not. `amount` is what both pay together."""

    credit_code: str
    card: CardPayment | None = None
    amount: StatedAmount | None = None


@dataclass(frozen=True)
class OtherPayment:
    """A payment type we do not take (ERR-6000), kept so that the refusal is the
    service's, not the channel's."""

    type: str


PaymentData = Hold | CardPayment | CreditPayment | OtherPayment


@dataclass(frozen=True)
class AncillaryPick:
    """A seat or service bought with the booking (DESIGN.md §11 "Ancillaries in the first
    booking"), or later by AcceptOffer: an item of a seats or services offer, for some
    passengers (None: every one it was priced for), a seat (row, column) for a seat item."""

    offer_id: str
    offer_item_id: str
    passenger_ids: tuple[str, ...] | None = None
    seat: tuple[int, str] | None = None


class CreateOrderInput(TypedDict):
    """Create order's keyword arguments besides the principal and the channel: what a
    channel's request maps to (`order_create(principal=..., **input)`)."""

    offer_id: str
    item_ids: Sequence[str]
    selections: Sequence[ItemSelection] | None
    passengers: Sequence[PassengerData]
    contact: ContactData
    payment: PaymentData
    ancillaries: Sequence[AncillaryPick]
    remarks: str


# --- change order (SPEC.md §4.10; DESIGN.md §11) ---------------------------------------


@dataclass(frozen=True)
class NameData:
    """A name as a patch sends it: either part may be left as it is (None)."""

    given_name: str | None = None
    surname: str | None = None


@dataclass(frozen=True)
class PassengerPatch:
    """What UpdatePassenger changes; a member left None is left as it is. The type of a
    passenger never changes after booking."""

    name: NameData | None = None
    date_of_birth: date | None = None
    gender: str | None = None
    nationality: str | None = None
    residence_country: str | None = None
    loyalty_program: LoyaltyProgram | None = None
    travel_documents: tuple[TravelDocument, ...] | None = None
    email: str | None = None  # the passenger's own contact
    phone: str | None = None

    def is_empty(self) -> bool:
        return all(getattr(self, f) is None for f in self.__dataclass_fields__)


@dataclass(frozen=True)
class CancelUnpaidOrder:
    kind: ClassVar[str] = "CancelUnpaidOrder"


@dataclass(frozen=True)
class ConfirmHold:
    kind: ClassVar[str] = "ConfirmHold"


@dataclass(frozen=True)
class CancelJourney:
    journey_ref: str
    kind: ClassVar[str] = "CancelJourney"


@dataclass(frozen=True)
class UpdatePassenger:
    """`passenger_id` is the PAX- id or the booking's own passengerId. `top_level`: it
    came as a top-level `passengers` entry, so its errors point there."""

    passenger_id: str
    patch: PassengerPatch
    top_level: bool = False
    kind: ClassVar[str] = "UpdatePassenger"


@dataclass(frozen=True)
class UpdateContact:
    contact: ContactData  # its name required (DESIGN.md §11 UpdateContact)
    kind: ClassVar[str] = "UpdateContact"


@dataclass(frozen=True)
class AcceptOffer:
    pick: AncillaryPick
    kind: ClassVar[str] = "AcceptOffer"


@dataclass(frozen=True)
class AcceptReshopOffer:
    offer_id: str
    offer_item_ids: tuple[str, ...]
    kind: ClassVar[str] = "AcceptReshopOffer"


@dataclass(frozen=True)
class AcceptAirlineChange:
    """The order takes the schedule an airline change brought (orders.servicing.airline_changes)."""

    change_id: str  # AIC- id
    kind: ClassVar[str] = "AcceptAirlineChange"


@dataclass(frozen=True)
class CancelForAirlineChange:
    """Cancel for an airline change: everything back, to the original payment
    (`OriginalPayment`) or as airline credit (`AirlineCredit`)."""

    change_id: str
    refund_to: str = "OriginalPayment"
    kind: ClassVar[str] = "CancelForAirlineChange"


Change = (
    CancelUnpaidOrder
    | ConfirmHold
    | CancelJourney
    | UpdatePassenger
    | UpdateContact
    | AcceptOffer
    | AcceptReshopOffer
    | AcceptAirlineChange
    | CancelForAirlineChange
)


class ChangeOrderInput(TypedDict):
    """Change order's keyword arguments besides the principal and the order's ref."""

    changes: Sequence[Change]
    payment: PaymentData | None
