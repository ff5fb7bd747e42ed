import datetime

import pytest

from cogeval.data.run_id import check_run_id, iso_utc, new_run_id
from cogeval.errors import InputError

UTC = datetime.UTC


def test_run_id_is_the_utc_start_time_and_8_hex_digits():
    start = datetime.datetime(2026, 10, 22, 12, 15, 30, 123999, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    run_id = new_run_id(start)
    assert run_id.startswith("20261022T101530123Z-")
    assert check_run_id(run_id) == run_id


def test_run_ids_sort_by_start_time():
    early = new_run_id(datetime.datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC))
    late = new_run_id(datetime.datetime(2026, 1, 2, 3, 4, 5, 7000, tzinfo=UTC))
    assert sorted([late, early]) == [early, late]


@pytest.mark.parametrize("bad", ["../x", "20261022T101530123Z-1A2B3C4D", "20261022T101530123Z-1a2b3c4d.json", "", None, 5])
def test_check_run_id_refuses_anything_that_could_escape_a_folder(bad):
    with pytest.raises(InputError, match=r"^run_id must look like '20261022T101530123Z-1a2b3c4d'"):
        check_run_id(bad)


def test_iso_utc():
    moment = datetime.datetime(2026, 10, 22, 10, 15, 30, 123456, tzinfo=UTC)
    assert iso_utc(moment) == "2026-10-22T10:15:30.123Z"
