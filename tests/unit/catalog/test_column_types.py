"""Column types: parameter rules, canonical constant defaults, and the allowed widenings."""

from __future__ import annotations

from typing import Any

import pytest

from catalog import ColumnType, ErrorCode
from catalog import commands as c
from catalog.column_types import (
    DEFAULT_LENGTH,
    MAX_DECIMAL_PRECISION,
    MAX_LENGTH,
    MAX_TIME_PRECISION,
    TypeParams,
    check_widening,
    normalize_default,
    resolve_params,
)
from catalog.errors import ValidationError
from tests.unit.catalog.helpers import bad_shape

T = ColumnType
NO_PARAMS = [T.BOOLEAN, T.INT8, T.INT16, T.INT32, T.INT64, T.FLOAT32, T.FLOAT64, T.DATE, T.UUID]


def _params(ctype: ColumnType, **kw: int) -> TypeParams:
    return resolve_params(ctype, kw.get("precision"), kw.get("scale"), kw.get("length"))


# -- parameters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ctype", "expected"),
    [
        *((t, (None, None, None)) for t in NO_PARAMS),
        (T.DECIMAL, (18, 0, None)),
        (T.STRING, (None, None, DEFAULT_LENGTH)),
        (T.BYTES, (None, None, DEFAULT_LENGTH)),
        (T.TIME, (0, None, None)),
        (T.TIMESTAMP, (6, None, None)),
        (T.TIMESTAMP_TZ, (6, None, None)),
    ],
)
def test_parameter_defaults(ctype: ColumnType, expected: tuple[int | None, ...]) -> None:
    params = _params(ctype)
    assert (params.precision, params.scale, params.length) == expected
    column = c.Column(name="C", type=ctype).to_descriptor(7)
    assert column.params == params
    assert column.id == 7


@pytest.mark.parametrize(
    ("ctype", "kw"),
    [
        (T.DECIMAL, {"precision": 1}),
        (T.DECIMAL, {"precision": MAX_DECIMAL_PRECISION, "scale": MAX_DECIMAL_PRECISION}),
        (T.DECIMAL, {"precision": 10, "scale": 0}),
        (T.DECIMAL, {"precision": 10, "scale": 10}),
        (T.STRING, {"length": 1}),
        (T.STRING, {"length": MAX_LENGTH}),
        (T.BYTES, {"length": 1}),
        (T.TIME, {"precision": 0}),
        (T.TIME, {"precision": MAX_TIME_PRECISION}),
        (T.TIMESTAMP, {"precision": 0}),
        (T.TIMESTAMP_TZ, {"precision": 9}),
    ],
)
def test_accepted_parameters(ctype: ColumnType, kw: dict[str, int]) -> None:
    params = _params(ctype, **kw)
    for name, value in kw.items():
        assert getattr(params, name) == value
    c.Column(name="C", type=ctype, **kw)


@pytest.mark.parametrize(
    ("ctype", "kw"),
    [
        *((t, {"precision": 1}) for t in NO_PARAMS),
        *((t, {"scale": 0}) for t in NO_PARAMS),
        *((t, {"length": 1}) for t in NO_PARAMS),
        (T.DECIMAL, {"precision": 0}),
        (T.DECIMAL, {"precision": MAX_DECIMAL_PRECISION + 1}),
        (T.DECIMAL, {"precision": 5, "scale": 6}),
        (T.DECIMAL, {"scale": -1}),
        (T.DECIMAL, {"scale": 19}),  # beyond the default precision 18
        (T.DECIMAL, {"length": 10}),
        (T.STRING, {"length": 0}),
        (T.STRING, {"length": MAX_LENGTH + 1}),
        (T.STRING, {"precision": 3}),
        (T.STRING, {"scale": 0}),
        (T.BYTES, {"length": -1}),
        (T.BYTES, {"precision": 1}),
        (T.TIME, {"precision": -1}),
        (T.TIME, {"precision": MAX_TIME_PRECISION + 1}),
        (T.TIME, {"length": 3}),
        (T.TIMESTAMP, {"scale": 0}),
        (T.TIMESTAMP_TZ, {"precision": 10}),
    ],
)
def test_refused_parameters(ctype: ColumnType, kw: dict[str, int]) -> None:
    with pytest.raises(ValidationError) as info:
        _params(ctype, **kw)
    assert info.value.code is ErrorCode.VALIDATION_ERROR
    bad_shape(lambda: c.Column(name="C", type=ctype, **kw))


# -- constant defaults ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ctype", "kw", "value", "canonical"),
    [
        (T.BOOLEAN, {}, True, True),
        (T.BOOLEAN, {}, False, False),
        (T.INT8, {}, -128, -128),
        (T.INT8, {}, 127, 127),
        (T.INT16, {}, -(2**15), -(2**15)),
        (T.INT16, {}, 2**15 - 1, 2**15 - 1),
        (T.INT32, {}, 2**31 - 1, 2**31 - 1),
        (T.INT64, {}, -(2**63), -(2**63)),
        (T.INT64, {}, 2**63 - 1, 2**63 - 1),
        (T.FLOAT32, {}, 1, 1.0),
        (T.FLOAT32, {}, 1.5, 1.5),
        (T.FLOAT32, {}, 3.4e38, 3.4e38),
        (T.FLOAT64, {}, -0.25, -0.25),
        (T.FLOAT64, {}, 1e308, 1e308),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "1.5", "1.50"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "-999.99", "-999.99"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, 12, "12.00"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, 0.1, "0.10"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "0", "0.00"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "-0", "0.00"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, -0.0, "0.00"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "-0.001E1", "-0.01"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "1.500", "1.50"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "1E+2", "100.00"),
        (T.DECIMAL, {"precision": 3, "scale": 3}, "0.125", "0.125"),
        (T.DECIMAL, {}, "123456789012345678", "123456789012345678"),
        (T.STRING, {"length": 3}, "abc", "abc"),
        (T.STRING, {"length": 3}, "äöü", "äöü"),
        (T.STRING, {}, "", ""),
        (T.BYTES, {"length": 2}, "CAFE", "cafe"),
        (T.BYTES, {"length": 2}, "ca fe", "cafe"),
        (T.BYTES, {}, "", ""),
        (T.DATE, {}, "2024-02-29", "2024-02-29"),
        (T.DATE, {}, "20240229", "2024-02-29"),
        (T.TIME, {}, "12:30", "12:30:00"),
        (T.TIME, {}, "23:59:59", "23:59:59"),
        (T.TIME, {"precision": 3}, "12:30:00.5", "12:30:00.500000"),
        (T.TIME, {"precision": 6}, "12:30:00.123456", "12:30:00.123456"),
        (T.TIMESTAMP, {}, "2024-01-02 03:04:05", "2024-01-02T03:04:05"),
        (T.TIMESTAMP, {}, "2024-01-02T03:04:05.123456", "2024-01-02T03:04:05.123456"),
        (T.TIMESTAMP, {"precision": 0}, "2024-01-02T03:04:05", "2024-01-02T03:04:05"),
        (T.TIMESTAMP_TZ, {}, "2024-01-02T03:04:05+02:00", "2024-01-02T01:04:05+00:00"),
        (T.TIMESTAMP_TZ, {}, "2024-01-02T03:04:05Z", "2024-01-02T03:04:05+00:00"),
        (T.TIMESTAMP_TZ, {}, "2024-01-01T00:30:00-01:00", "2024-01-01T01:30:00+00:00"),
        (
            T.UUID,
            {},
            "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
            "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
        ),
        (
            T.UUID,
            {},
            "{3f2504e04f8911d39a0c0305e82c3301}",
            "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
        ),
    ],
)
def test_canonical_defaults(
    ctype: ColumnType, kw: dict[str, int], value: Any, canonical: Any
) -> None:
    params = _params(ctype, **kw)
    stored = normalize_default(params, value)
    assert stored == canonical
    assert type(stored) is type(canonical)
    assert normalize_default(params, stored) == stored  # canonical forms are fixed points
    column = c.Column(name="C", type=ctype, default=value, **kw).to_descriptor(0)
    assert column.default == canonical


@pytest.mark.parametrize(
    ("ctype", "kw", "value"),
    [
        (T.BOOLEAN, {}, 1),
        (T.BOOLEAN, {}, "true"),
        (T.INT8, {}, True),  # a bool is not an int here
        (T.INT64, {}, False),
        (T.INT8, {}, 128),
        (T.INT8, {}, -129),
        (T.INT16, {}, 2**15),
        (T.INT32, {}, -(2**31) - 1),
        (T.INT64, {}, 2**63),
        (T.INT32, {}, 1.0),
        (T.INT32, {}, "1"),
        (T.FLOAT32, {}, True),
        (T.FLOAT32, {}, "1.5"),
        (T.FLOAT32, {}, 1e39),  # beyond FLOAT32's range
        (T.FLOAT32, {}, -1e39),
        (T.FLOAT64, {}, float("inf")),
        (T.FLOAT64, {}, float("nan")),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "1.555"),  # not rounded
        (T.DECIMAL, {"precision": 5, "scale": 2}, "1000"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, 1000),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "abc"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "NaN"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, "Infinity"),
        (T.DECIMAL, {"precision": 5, "scale": 2}, True),
        (T.DECIMAL, {"precision": 5, "scale": 2}, float("inf")),
        (T.DECIMAL, {"precision": 3, "scale": 3}, "1"),
        (T.DECIMAL, {}, "1" * 40),
        (T.STRING, {"length": 3}, "abcd"),
        (T.STRING, {}, 1),
        (T.STRING, {}, True),
        (T.BYTES, {"length": 2}, "cafe00"),
        (T.BYTES, {}, "xyz"),
        (T.BYTES, {}, "abc"),  # odd number of hex digits
        (T.BYTES, {}, 12),
        (T.DATE, {}, "2023-02-29"),
        (T.DATE, {}, "2024-01-01T00:00:00"),
        (T.DATE, {}, "yesterday"),
        (T.DATE, {}, 20240101),
        (T.TIME, {}, "25:00"),
        (T.TIME, {}, "12:30:00.5"),  # TIME(0) takes no fraction
        (T.TIME, {"precision": 3}, "12:30:00.1234"),
        (T.TIME, {}, "12:30:00+01:00"),
        (T.TIMESTAMP, {}, "2024-01-02T03:04:05+00:00"),
        (T.TIMESTAMP, {"precision": 0}, "2024-01-02T03:04:05.1"),
        (T.TIMESTAMP, {}, "not a timestamp"),
        (T.TIMESTAMP_TZ, {}, "2024-01-02T03:04:05"),
        (T.TIMESTAMP_TZ, {"precision": 3}, "2024-01-02T03:04:05.0001+00:00"),
        (T.UUID, {}, "not-a-uuid"),
        (T.UUID, {}, 1),
    ],
)
def test_defaults_that_do_not_fit(ctype: ColumnType, kw: dict[str, int], value: Any) -> None:
    with pytest.raises(ValidationError) as info:
        normalize_default(_params(ctype, **kw), value)
    assert info.value.code is ErrorCode.VALIDATION_ERROR
    bad_shape(lambda: c.Column(name="C", type=ctype, default=value, **kw))


def test_json_defaults_keep_their_json_type() -> None:
    # From JSON, true stays a bool and 1 an int: the union must not coerce one into the other.
    (cmd,) = c.parse(
        {
            "op": "add_columns",
            "table": "T",
            "columns": [
                {"name": "B", "type": "BOOLEAN", "default": True},
                {"name": "I", "type": "INT8", "default": 1},
                {"name": "F", "type": "FLOAT64", "default": 1},
                {"name": "S", "type": "STRING", "default": "1"},
            ],
        }
    )
    assert isinstance(cmd, c.AddColumns)
    defaults = [col.default for col in cmd.columns]
    assert defaults == [True, 1, 1, "1"]
    assert [type(d) for d in defaults] == [bool, int, int, str]
    bad_shape(
        lambda: c.parse(
            {
                "op": "add_columns",
                "table": "T",
                "columns": [{"name": "I", "type": "INT8", "default": True}],
            }
        )
    )


# -- widening ------------------------------------------------------------------------------

_INTS = [T.INT8, T.INT16, T.INT32, T.INT64]


@pytest.mark.parametrize("old", _INTS)
@pytest.mark.parametrize("new", _INTS)
def test_integer_widening_matrix(old: ColumnType, new: ColumnType) -> None:
    if _INTS.index(new) >= _INTS.index(old):
        check_widening(_params(old), _params(new))
    else:
        with pytest.raises(ValidationError) as info:
            check_widening(_params(old), _params(new))
        assert info.value.code is ErrorCode.UNSUPPORTED_CHANGE


_ALL = list(ColumnType)
_ALLOWED_TYPE_CHANGES = {
    (T.INT8, T.INT16),
    (T.INT8, T.INT32),
    (T.INT8, T.INT64),
    (T.INT16, T.INT32),
    (T.INT16, T.INT64),
    (T.INT32, T.INT64),
    (T.FLOAT32, T.FLOAT64),
}


@pytest.mark.parametrize("old", _ALL)
@pytest.mark.parametrize("new", _ALL)
def test_type_change_matrix(old: ColumnType, new: ColumnType) -> None:
    if old is new or (old, new) in _ALLOWED_TYPE_CHANGES:
        check_widening(_params(old), _params(new))
        return
    with pytest.raises(ValidationError) as info:
        check_widening(_params(old), _params(new))
    assert info.value.code is ErrorCode.UNSUPPORTED_CHANGE


@pytest.mark.parametrize(
    ("old", "new", "ok"),
    [
        ({"length": 10}, {"length": 10}, True),
        ({"length": 10}, {"length": 11}, True),
        ({"length": 10}, {"length": 9}, False),
    ],
)
@pytest.mark.parametrize("ctype", [T.STRING, T.BYTES])
def test_length_changes(
    ctype: ColumnType, old: dict[str, int], new: dict[str, int], ok: bool
) -> None:
    if ok:
        check_widening(_params(ctype, **old), _params(ctype, **new))
    else:
        with pytest.raises(ValidationError) as info:
            check_widening(_params(ctype, **old), _params(ctype, **new))
        assert info.value.code is ErrorCode.UNSUPPORTED_CHANGE


@pytest.mark.parametrize(
    ("new", "ok"),
    [
        ({"precision": 10, "scale": 2}, True),
        ({"precision": 11, "scale": 2}, True),
        ({"precision": 38, "scale": 2}, True),
        ({"precision": 9, "scale": 2}, False),
        ({"precision": 10, "scale": 3}, False),
        ({"precision": 11, "scale": 1}, False),
    ],
)
def test_decimal_changes(new: dict[str, int], ok: bool) -> None:
    old = _params(T.DECIMAL, precision=10, scale=2)
    if ok:
        check_widening(old, _params(T.DECIMAL, **new))
    else:
        with pytest.raises(ValidationError) as info:
            check_widening(old, _params(T.DECIMAL, **new))
        assert info.value.code is ErrorCode.UNSUPPORTED_CHANGE


@pytest.mark.parametrize("ctype", [T.TIME, T.TIMESTAMP, T.TIMESTAMP_TZ])
@pytest.mark.parametrize("delta", [-1, 1])
def test_time_precision_cannot_change(ctype: ColumnType, delta: int) -> None:
    with pytest.raises(ValidationError) as info:
        check_widening(_params(ctype, precision=3), _params(ctype, precision=3 + delta))
    assert info.value.code is ErrorCode.UNSUPPORTED_CHANGE
