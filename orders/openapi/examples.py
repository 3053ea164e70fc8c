"""Request examples of create order, change order and reshop."""

from drf_spectacular.utils import OpenApiExample

_PASSENGERS = [
    {
        "passengerId": "ADT-1",
        "type": "ADT",
        "name": {"givenName": "Ada", "surname": "Lovelace"},
        "infantPassengerId": "INF-1",
    },
    {
        "passengerId": "INF-1",
        "type": "INF",
        "name": {"givenName": "Byron", "surname": "Lovelace"},
        "dateOfBirth": "2026-02-01",
    },
]
_CONTACT = {"emailAddress": "ada@example.com", "phoneNumber": "+1 401 555 0100"}
CREATE_EXAMPLES = [
    OpenApiExample(
        "Hold",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {"type": "Hold"},
        },
    ),
    OpenApiExample(
        "Card",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1", "<priced offerId>.2"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {
                "type": "CreditCard",
                "cardType": "VI",
                "cardNumber": "4111111111111111",
                "expiryDate": "1230",
                "securityCode": "123",
                "payer": {"name": {"givenName": "Ada", "surname": "Lovelace"}},
            },
        },
    ),
    OpenApiExample(
        "Hold with a seat and a bag",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {"type": "Hold"},
            "ancillaries": [
                {
                    "offerId": "<seats offerId of the priced offer>",
                    "offerItemId": "<seats offerId>.2",
                    "passengerIds": ["ADT-1"],
                    "seat": {"row": 12, "column": "A"},
                },
                {
                    "offerId": "<services offerId of the priced offer>",
                    "offerItemId": "<services offerId>.1",
                    "passengerIds": ["ADT-1"],
                },
            ],
        },
    ),
    OpenApiExample(
        "Airline credit",
        description="A credit of this seller (an earlier order's `credits[]`) that covers "
        "the whole amount due: CONFIRMED and ticketed, one payment of method Credit.",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {"type": "AirlineCredit", "creditCode": "MXAB23CD45EF"},
        },
    ),
    OpenApiExample(
        "Airline credit and a card for the rest",
        description="The credit is spent first; the card is charged what it does not cover, "
        "in the same request. A declined card spends nothing of the credit and books nothing.",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {
                "type": "AirlineCredit",
                "creditCode": "MXAB23CD45EF",
                "card": {
                    "cardType": "VI",
                    "cardNumber": "4111111111111111",
                    "expiryDate": "1230",
                    "securityCode": "123",
                    "payer": {"name": {"givenName": "Ada", "surname": "Lovelace"}},
                },
            },
        },
    ),
]

CHANGE_EXAMPLES = [
    OpenApiExample(
        "Add a seat and a bag",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "AcceptOffer",
                    "offerId": "<seats offerId>",
                    "offerItemId": "<seats offerId>.3",
                    "passengerIds": ["PAX-1A2B3C4D"],
                    "seat": {"row": 12, "column": "A"},
                },
                {
                    "type": "AcceptOffer",
                    "offerId": "<services offerId>",
                    "offerItemId": "<services offerId>.1",
                    "passengerIds": ["PAX-1A2B3C4D"],
                },
            ]
        },
    ),
    OpenApiExample(
        "Confirm a hold",
        request_only=True,
        value={
            "changes": [{"type": "ConfirmHold"}],
            "payment": {
                "type": "CreditCard",
                "cardType": "VI",
                "cardNumber": "4111111111111111",
                "expiryDate": "1230",
                "securityCode": "123",
            },
        },
    ),
    OpenApiExample(
        "Cancel a hold", request_only=True, value={"changes": [{"type": "CancelUnpaidOrder"}]}
    ),
    OpenApiExample(
        "Cancel a round trip (as reshop CancelOrder quoted it)",
        request_only=True,
        value={
            "changes": [
                {"type": "CancelJourney", "journeyRef": "JOU-1A2B3C4D"},
                {"type": "CancelJourney", "journeyRef": "JOU-5E6F7A8B"},
            ]
        },
    ),
    OpenApiExample(
        "Correct a passenger and the contact",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "UpdatePassenger",
                    "passengerId": "PAX-1A2B3C4D",
                    "patch": {
                        "dateOfBirth": "1990-05-17",
                        "contacts": {"emailAddress": "ada@example.com"},
                    },
                },
                {
                    "type": "UpdateContact",
                    "contact": {
                        "emailAddress": "bookings@example.com",
                        "phoneNumber": "+1 401 555 0100",
                        "name": {"givenName": "Ada", "surname": "Lovelace"},
                    },
                },
            ],
            "passengers": [{"passengerId": "PAX-5E6F7A8B", "gender": "Male"}],
        },
    ),
    OpenApiExample(
        "Accept a quoted reshop offer (card for an AddCol difference)",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "AcceptReshopOffer",
                    "offerId": "<quote offerId>",
                    "offerItemIds": ["<quote offerId>.1"],
                }
            ],
            "payment": {
                "type": "CreditCard",
                "cardType": "VI",
                "cardNumber": "4111111111111111",
                "expiryDate": "1230",
                "securityCode": "123",
            },
        },
    ),
]

CHANGE_EXAMPLES += [
    OpenApiExample(
        "Accept an airline-initiated change",
        request_only=True,
        value={"changes": [{"type": "AcceptAirlineChange", "airlineChangeId": "AIC-3F9A1C2B"}]},
    ),
    OpenApiExample(
        "Cancel for an airline-initiated change (everything back as airline credit)",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "CancelForAirlineChange",
                    "airlineChangeId": "AIC-3F9A1C2B",
                    "refundTo": "AirlineCredit",
                }
            ]
        },
    ),
]

RESHOP_EXAMPLES = [
    OpenApiExample(
        "Replacement flights for a journey",
        request_only=True,
        value={
            "instruction": {
                "type": "ReshopItinerary",
                "originDestinations": [
                    {"origin": "PVD", "destination": "CHS", "departureDate": "2027-01-16"}
                ],
                "deleteOrderItemRefIds": ["OOI-1A2B3C4D"],
            }
        },
    ),
    OpenApiExample(
        "What cancelling the whole order gives back",
        request_only=True,
        value={"instruction": {"type": "CancelOrder"}},
    ),
    OpenApiExample(
        "What cancelling one journey gives back",
        request_only=True,
        value={"instruction": {"type": "DeleteOrderItems", "orderItemRefIds": ["OOI-1A2B3C4D"]}},
    ),
    OpenApiExample(
        "What a name change costs",
        request_only=True,
        value={
            "instruction": {
                "type": "NameChange",
                "paxRefId": "PAX-1A2B3C4D",
                "surname": "Byron",
                "givenName": "Ada",
            }
        },
    ),
]
