"""Shape checks for the bundle JSON fields: they go on the wire as they are stored
(SPEC.md §2.2 Fare sub-structures), so an admin edit must not be able to break the
contract. Only the documented keys are accepted, each with its documented type."""

from collections.abc import Callable, Mapping
from typing import Any

from django.core.exceptions import ValidationError

Check = Callable[[Any], bool]


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _one_of(*allowed: str) -> Check:
    return lambda value: value in allowed


def _object(fields: Mapping[str, Check], required: frozenset[str]) -> Check:
    def check(value: Any) -> bool:
        return not _object_errors(value, fields, required)

    return check


def _object_errors(
    value: Any, fields: Mapping[str, Check], required: frozenset[str], where: str = ""
) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where or 'entry'} must be an object"]
    errors = [f"{where}{key} is required" for key in sorted(required - value.keys())]
    for key, item in value.items():
        check = fields.get(key)
        if check is None:
            errors.append(f"{where}{key} is not a SPEC.md §2.2 field")
        elif not check(item):
            errors.append(f"{where}{key} has the wrong type or value")
    return errors


BENEFIT = {"label": _is_string, "included": _is_bool, "status": _is_string, "quantity": _is_int}
WEIGHT = {
    "maximumWeightMeasure": _is_number,
    "weightUnitOfMeasurement": _one_of("KGM", "LBR"),
}
DIMENSIONS = {
    "lengthUnitOfMeasurement": _one_of("CMT", "FOT", "INH", "MTR"),
    "heightMeasure": _is_number,
    "lengthMeasure": _is_number,
    "linearMeasure": _is_number,
    "widthMeasure": _is_number,
}
BAGGAGE_DISCLOSURE = {
    "code": _is_string,
    "description": _is_string,
    "ruleTypeCode": _is_string,
    "weightAllowance": _object(WEIGHT, frozenset()),
    "dimensionAllowance": _object(DIMENSIONS, frozenset({"lengthUnitOfMeasurement"})),
}
RESTRICTION = {
    "allowedModificationInd": _is_bool,
    "amount": _is_number,
    "changeTypeCode": _is_string,
    "creditPercent": _is_number,
    "description": _is_string,
    "journeyStageCode": _is_string,
    "maxDaysBeforeDeparture": _is_number,
    "maxHoursBeforeDeparture": _is_number,
    "minDaysBeforeDeparture": _is_number,
    "minHoursBeforeDeparture": _is_number,
    "priceDifferenceApplies": _is_bool,
}
PENALTY = {
    "code": _is_string,
    "description": _is_string,
    "typeCode": _one_of("Change", "Cancellation"),
    "creditIncludesAddOns": _is_bool,
    "creditMethod": _is_string,
    "creditValidityMonths": _is_int,
    "fixedAmount": _is_number,
    "fullReservationOnly": _is_bool,
    "requiresRewardsAccount": _is_bool,
    "restrictions": lambda value: (
        isinstance(value, list) and all(_object(RESTRICTION, frozenset())(r) for r in value)
    ),
}
SEAT_PROFILE = {"code": _is_string, "description": _is_string, "characteristicCodes": _is_strings}


def _validate_list(
    value: Any, fields: Mapping[str, Check], required: frozenset[str], name: str
) -> None:
    if not isinstance(value, list):
        raise ValidationError(f"{name} must be a list")
    errors = []
    for index, entry in enumerate(value):
        errors += _object_errors(entry, fields, required, where=f"{name}[{index}].")
    if errors:
        raise ValidationError(errors)


def validate_benefits(value: Any) -> None:
    _validate_list(value, BENEFIT, frozenset({"label", "included"}), "benefits")


def validate_baggage_disclosures(value: Any) -> None:
    required = frozenset({"code", "description", "ruleTypeCode"})
    _validate_list(value, BAGGAGE_DISCLOSURE, required, "baggageDisclosures")


def validate_penalties(value: Any) -> None:
    _validate_list(value, PENALTY, frozenset({"code", "description", "typeCode"}), "penalties")


def validate_seat_profiles(value: Any) -> None:
    _validate_list(value, SEAT_PROFILE, frozenset({"code", "description"}), "seatProfiles")
