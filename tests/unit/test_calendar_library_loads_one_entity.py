"""A library calendar is computed from its one market's or country's module, with the library's
own answer: the same class for every code the library lists (``list_supported_financial``,
``list_supported_countries``), the same subdivisions, the same dates as
``holidays.financial_holidays`` / ``country_holidays``, the same refusal of a name it lacks —
and without the ``holidays.financial`` and ``holidays.countries`` packages, which import every
market's and country's module (``almanac validate`` of a calendar spec, ``bench/cli_startup.py``).

Each check runs in a fresh interpreter: in this one another test may have imported those
packages already, and a module the library imported would hide the one-module path.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from timecontract.calendars import CALENDAR_FIRST_YEAR, CALENDAR_LAST_YEAR


def run(code: str) -> object:
    """Run ``code`` in a fresh interpreter; it prints one JSON value, returned."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(result.stdout.splitlines()[-1])


def test_a_market_calendar_loads_neither_package_of_every_entity() -> None:
    loaded = run(
        "import json, sys\n"
        "from timecontract.calendars import library_document\n"
        "document = library_document('NYSE')\n"
        "print(json.dumps([len(document['holidays']),\n"
        "    sorted(m for m in ('holidays.financial', 'holidays.countries') if m in sys.modules)]))"
    )
    assert isinstance(loaded, list)
    count, packages = loaded
    assert count > 1000  # 1970–2200: about five NYSE closings a year at least
    assert packages == []


def test_every_listed_code_finds_the_class_the_library_instantiates() -> None:
    # First the one-module path for every code, then the library's own listing and loader.
    verdict = run(
        "import json\n"
        "from holidays.registry import COUNTRIES, FINANCIAL\n"
        "from timecontract.calendars import _library_entity\n"
        "codes = {kind: sorted({c for e in r.values() for c in e[1:]} | {'ZZ', 'XXXX', 'nyse'})\n"
        "         for kind, r in (('financial', FINANCIAL), ('countries', COUNTRIES))}\n"
        "found = {(kind, c): _library_entity(kind, c) for kind in codes for c in codes[kind]}\n"
        "import holidays\n"
        "listed = {'financial': holidays.list_supported_financial(),\n"
        "          'countries': holidays.list_supported_countries()}\n"
        "bad = []\n"
        "for (kind, code), entity in found.items():\n"
        "    if code not in listed[kind]:\n"
        "        if entity is not None: bad.append((kind, code, 'not listed'))\n"
        "    elif entity is not getattr(holidays, code).get_entity():\n"
        "        bad.append((kind, code, 'another class'))\n"
        "    elif list(entity.subdivisions) != listed[kind][code]:\n"
        "        bad.append((kind, code, 'other subdivisions'))\n"
        "print(json.dumps({'checked': len(found), 'bad': bad}))"
    )
    assert isinstance(verdict, dict)
    assert verdict["bad"] == []
    assert verdict["checked"] > 300  # every market and country code, aliases included


@pytest.mark.parametrize("name", ["NYSE", "XECB", "US", "US-NY", "DE-BY", "AX", "GB"])
def test_dates_equal_the_library_functions(name: str) -> None:
    # AX's module imports another country's (Finland's) through holidays.countries: still equal.
    years = f"range({CALENDAR_FIRST_YEAR}, {CALENDAR_LAST_YEAR + 1})"
    same = run(
        "import json\n"
        "from timecontract.calendars import library_document\n"
        f"ours = library_document({name!r})['holidays']\n"
        "import holidays\n"
        f"name, years = {name!r}, {years}\n"
        "country, _, subdivision = name.partition('-')\n"
        "theirs = (holidays.financial_holidays(name, years=years)\n"
        "          if name in holidays.list_supported_financial()\n"
        "          else holidays.country_holidays(country, subdiv=subdivision or None,\n"
        "                                         years=years))\n"
        "print(json.dumps(ours == {d.isoformat(): theirs[d] for d in sorted(theirs)}))"
    )
    assert same is True


@pytest.mark.parametrize("name", ["ZZ", "NYSE-X", "US-ZZ", "nyse"])
def test_a_name_the_library_lacks_is_refused_on_calendar_name(name: str) -> None:
    from timecontract.calendars import library_document
    from timecontract.errors import SpecError

    with pytest.raises(SpecError) as raised:
        library_document(name)
    assert raised.value.field == "calendar.name"
