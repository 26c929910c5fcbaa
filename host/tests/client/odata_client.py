#!/usr/bin/env python3
"""Gatehouse's `/odata` routes read by a third-party OData v4 client.

python-odata (pinned in requirements.txt) reflects the model from `$metadata`,
then reads, filters, orders, counts, selects, expands and navigates the sets of
a throwaway SQLite database served by the `gatehouse` binary. Every answer is
checked against the rows this script inserted. Pages hold two entities, so a
read of a whole set only completes by following `@odata.nextLink`.

    python3 -m venv /tmp/gh-odata-client
    /tmp/gh-odata-client/bin/pip install -r tests/client/requirements.txt
    /tmp/gh-odata-client/bin/python tests/client/odata_client.py

`GATEHOUSE_BIN` names the binary (default `target/debug/gatehouse`, built by
`cargo build`). With `GATEHOUSE_CLIENT_DATABASE_URL=mysql://root@127.0.0.1:3306/test`
the rows go to a fresh database on that MySQL/MariaDB server instead (made and
dropped with the `mariadb` client). Prints one line per check and exits
non-zero when any fails.
"""

import contextlib
import datetime as dt
import math
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
from odata import ODataError, ODataService
from odata.exceptions import NoResultsFound
from odata.navproperty import NavigationProperty
from odata.property import (
    BooleanProperty,
    DatetimeProperty,
    DecimalProperty,
    IntegerProperty,
    StringProperty,
)

REPO = Path(__file__).resolve().parents[2]

# A server's database for the run (`mysql://…`), else a SQLite file.
SERVER_URL = os.environ.get("GATEHOUSE_CLIENT_DATABASE_URL")
# `INTEGER` is 64 bits on SQLite, `INT` 32 bits on MySQL/MariaDB.
INTEGER_EDM_TYPE = "Edm.Int32" if SERVER_URL else "Edm.Int64"
PAGE_SIZE = 2
UTC = dt.timezone.utc

OWNERS = [(1, "Ann"), (2, "Bob"), (3, "Cyd")]

# id, name, species, weight, born, adopted (as stored), vaccinated, owner_id.
# Instants are stored in several spellings; the service answers them in UTC.
PETS = [
    (1, "Tom", "cat", "4.50", "2019-03-01", "2020-01-02 10:30:00", 1, 1),
    (2, "Rex", "dog", "30.25", "2018-07-15", "2019-05-05T08:00:00Z", 0, 2),
    (3, "Tiger", "cat", "12", "2020-11-30", None, 1, 1),
    (4, "O'Malley", "cat", "6.75", "2017-02-14", "2021-06-30T23:15:00+02:00", 1, 2),
    (5, "Zoë", "rabbit", "2.10", "2022-05-05", None, 0, None),
    (6, "Bella", "dog", "22.80", "2016-09-09", "2018-12-24 18:00:00", 1, None),
    (7, "Max", "dog", "8", "2021-01-10", None, None, None),
    (8, "Tigger", "cat", "5.05", "2015-04-04", "2016-01-01T00:00:00Z", 1, None),
    (9, "Nemo", "fish", None, None, None, 0, None),
]

SCHEMA = """
CREATE TABLE owners (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE pets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    species TEXT,
    weight DECIMAL(6,2),
    born DATE,
    adopted DATETIME,
    vaccinated BOOLEAN,
    owner_id INTEGER REFERENCES owners(id)
);
"""

# Pets is public, Owners needs a signed-in caller (a bearer token here).
ROCKET_TOML = """\
[default]
address = "127.0.0.1"
port = {port}
base_url = "http://127.0.0.1:{port}"

[default.databases.main]
url = "{db}"

[default.mail]
transport = "log"

[default.odata.pagination]
default = {page_size}

[default.odata.sets.Pets]
table = "pets"
public = true
searchable = ["name"]
navigation = {{ owner = {{ target = "Owners", column = "owner_id" }} }}

[default.odata.sets.Owners]
table = "owners"
navigation = {{ pets = {{ target = "Pets", remote_column = "owner_id" }} }}
"""

EMAIL = "client@example.org"
PASSWORD = "a long enough client test password"


def instant(text):
    """A stored instant as an aware datetime; no zone means UTC."""
    t = dt.datetime.fromisoformat(text)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def expected(row):
    """A stored pet as the service should describe it."""
    id_, name, species, weight, born, adopted, vaccinated, owner_id = row
    return {
        "id": id_,
        "name": name,
        "species": species,
        "weight": None if weight is None else Decimal(weight),
        "born": born,
        "adopted": None if adopted is None else instant(adopted),
        "vaccinated": None if vaccinated is None else bool(vaccinated),
        "owner_id": owner_id,
    }


ROWS = [expected(r) for r in PETS]
OWNER_NAMES = dict(OWNERS)


def seen(pet):
    """A pet entity read through the client, as a comparable dict."""
    return {
        "id": pet.id,
        "name": pet.name,
        "species": pet.species,
        "weight": pet.weight,
        # The client has no Edm.Date type and keeps the ISO text.
        "born": pet.born,
        "adopted": pet.adopted,
        # The client's BooleanProperty turns null into False: read the JSON value.
        "vaccinated": pet.__odata__["vaccinated"],
        "owner_id": pet.owner_id,
    }


def rows_where(pred):
    return [r for r in ROWS if pred(r)]


def ordered(rows, *terms):
    """`rows` in `$orderby` order: (property, descending) terms, nulls first when
    ascending and last when descending (OData Part 1, 11.2.5.2), ties by key."""
    out = sorted(rows, key=lambda r: r["id"])
    for prop, desc in reversed(terms):
        out = sorted(out, key=lambda r: (r[prop] is not None, r[prop]), reverse=desc)
    return out


class Failure(Exception):
    pass


def expect(condition, what):
    if not condition:
        raise Failure(what)


def same(actual, wanted, what):
    if actual != wanted:
        raise Failure(f"{what}\n      expected {wanted!r}\n      got      {actual!r}")


def same_pets(pets, rows, what):
    """The pets read are exactly `rows`, in order; names what differs."""
    got = [seen(p) for p in pets]
    if got == rows:
        return
    same([g["id"] for g in got], [r["id"] for r in rows], f"{what}: ids")
    for g, r in zip(got, rows):
        wrong = [f"{k} expected {r[k]!r}, got {g[k]!r}" for k in r if g[k] != r[k]]
        if wrong:
            raise Failure(f"{what}\n      Pets({r['id']}): " + "; ".join(wrong))


def odata_error(call, status, what):
    """Runs `call`, which must fail with the client's ODataError for `status`."""
    try:
        call()
    except ODataError as e:
        same(getattr(e, "status_code", None), f"HTTP {status}", f"{what}: status")
        expect(e.code not in (None, "None"), f"{what}: the error names no code ({e})")
        return e
    raise Failure(f"{what}: no error raised, expected HTTP {status}")


class RecordingSession(requests.Session):
    """A requests session that remembers the URL of every request."""

    def __init__(self):
        super().__init__()
        self.urls = []

    def request(self, method, url, *args, **kwargs):
        response = super().request(method, url, *args, **kwargs)
        self.urls.append(response.url)
        return response


class Bearer(requests.auth.AuthBase):
    def __init__(self, token):
        self.token = token

    def __call__(self, request):
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


class Client:
    """One reflected service as a guest and one with a bearer token."""

    def __init__(self, url, token):
        self.url = url
        self.guest_http = RecordingSession()
        self.guest = ODataService(
            url, reflect_entities=True, session=self.guest_http, quiet_progress=True
        )
        self.member_http = RecordingSession()
        self.member = ODataService(
            url,
            reflect_entities=True,
            session=self.member_http,
            auth=Bearer(token),
            quiet_progress=True,
        )
        self.Pets = self.guest.entities["Pets"]

    def pets(self):
        return self.guest.query(self.Pets)

    def counted(self, http, read):
        """`read()`'s result and the URLs it requested."""
        http.urls.clear()
        result = read()
        return result, list(http.urls)


CHECKS = []


def check(name):
    def register(fn):
        CHECKS.append((name, fn))
        return fn

    return register


# --- the model ---------------------------------------------------------------


@check("$metadata: Pets reflected with its key and EDM types; Owners hidden from guests")
def reflected_model(c):
    same(sorted(c.guest.entities), ["Pets"], "sets a guest sees")
    schema = c.Pets.__odata_schema__
    same(schema["type"], "Gatehouse.Pets", "entity type")
    same(
        [(p["name"], p["type"], p["is_primary_key"]) for p in schema["properties"]],
        [
            ("id", INTEGER_EDM_TYPE, True),
            ("name", "Edm.String", False),
            ("species", "Edm.String", False),
            ("weight", "Edm.Decimal", False),
            ("born", "Edm.Date", False),
            ("adopted", "Edm.DateTimeOffset", False),
            ("vaccinated", "Edm.Boolean", False),
            ("owner_id", INTEGER_EDM_TYPE, False),
        ],
        "properties (name, type, key)",
    )
    kinds = {
        "id": IntegerProperty,
        "name": StringProperty,
        "weight": DecimalProperty,
        "adopted": DatetimeProperty,
        "vaccinated": BooleanProperty,
    }
    for name, kind in kinds.items():
        expect(isinstance(getattr(c.Pets, name), kind), f"{name} is not a {kind.__name__}")
    same(schema["navigation_properties"], [], "navigations a guest sees (Owners is hidden)")


@check("$metadata with a bearer token: Owners and both navigations")
def reflected_navigations(c):
    sets = set(c.member.entities)
    expect({"Pets", "Owners"} <= sets, f"a member sees {sorted(sets)}")
    pets = c.member.entities["Pets"].__odata_schema__["navigation_properties"]
    owners = c.member.entities["Owners"].__odata_schema__["navigation_properties"]
    same([(n["name"], n["type"]) for n in pets], [("owner", "Gatehouse.Owners")], "Pets navigations")
    same(
        [(n["name"], n["type"]) for n in owners],
        [("pets", "Collection(Gatehouse.Pets)")],
        "Owners navigations",
    )
    owner = c.member.entities["Pets"].owner
    expect(isinstance(owner, NavigationProperty) and not owner.is_collection, "Pets.owner is to-one")
    expect(c.member.entities["Owners"].pets.is_collection, "Owners.pets is to-many")


# --- reading -----------------------------------------------------------------


@check("whole set: every row, in key order, by following @odata.nextLink")
def whole_set(c):
    pets, urls = c.counted(c.guest_http, lambda: c.pets().all())
    same_pets(pets, ROWS, "Pets")
    same(len(urls), math.ceil(len(ROWS) / PAGE_SIZE), f"requests for {len(ROWS)} rows in pages of {PAGE_SIZE}")
    expect(all("$skip=" in u or "%24skip=" in u for u in urls[1:]), f"next links without $skip: {urls}")


@check("JSON values: decimals as numbers, instants in UTC with Z, dates as dates")
def json_values(c):
    data = c.guest.default_context.connection.execute_get(c.url + "Pets(4)")
    expect(isinstance(data["weight"], (int, float)), f"weight is {data['weight']!r}")
    same(data["adopted"], "2021-06-30T21:15:00Z", "instant stored with +02:00")
    same(data["born"], "2017-02-14", "date")
    same(data["vaccinated"], True, "boolean stored as 1")


def filter_check(label, build, pred):
    @check(f"$filter {label}")
    def run(c):
        query = build(c.pets(), c.Pets)
        same_pets(query.all(), rows_where(pred), query.as_string())


ONE_HOUR_EAST = dt.timezone(dt.timedelta(hours=1))
FILTERS = [
    ("species eq 'cat'", lambda q, P: q.filter(P.species == "cat"), lambda r: r["species"] == "cat"),
    (
        "weight gt 10 (Edm.Decimal)",
        lambda q, P: q.filter(P.weight > Decimal("10")),
        lambda r: r["weight"] is not None and r["weight"] > 10,
    ),
    (
        "weight lt 5 (null is not less)",
        lambda q, P: q.filter(P.weight < 5),
        lambda r: r["weight"] is not None and r["weight"] < 5,
    ),
    (
        "weight ne 8 (null is not equal)",
        lambda q, P: q.filter(P.weight != 8),
        lambda r: r["weight"] != 8,
    ),
    ("startswith(name,'Tig')", lambda q, P: q.filter(P.name.startswith("Tig")), lambda r: r["name"].startswith("Tig")),
    ("endswith(name,'r')", lambda q, P: q.filter(P.name.endswith("r")), lambda r: r["name"].endswith("r")),
    (
        "contains(name,'m') (case-sensitive)",
        lambda q, P: q.filter(P.name.contains("m")),
        lambda r: "m" in r["name"],
    ),
    ("not contains(name,'i')", lambda q, P: q.filter(P.name.lacks("i")), lambda r: "i" not in r["name"]),
    ("name eq 'O''Malley' (quote escaped)", lambda q, P: q.filter(P.name == "O'Malley"), lambda r: r["name"] == "O'Malley"),
    ("name eq 'Zoë' (non-ASCII)", lambda q, P: q.filter(P.name == "Zoë"), lambda r: r["name"] == "Zoë"),
    ("vaccinated eq true", lambda q, P: q.filter(P.vaccinated == True), lambda r: r["vaccinated"] is True),  # noqa: E712
    (
        "vaccinated ne true (null included)",
        lambda q, P: q.filter(P.vaccinated != True),  # noqa: E712
        lambda r: r["vaccinated"] is not True,
    ),
    (
        "adopted gt 2020-01-01T00:00:00+00:00",
        lambda q, P: q.filter(P.adopted > dt.datetime(2020, 1, 1, tzinfo=UTC)),
        lambda r: r["adopted"] is not None and r["adopted"] > dt.datetime(2020, 1, 1, tzinfo=UTC),
    ),
    (
        "adopted lt 2021-06-30T22:00:00+01:00 (offsets compared as instants)",
        lambda q, P: q.filter(P.adopted < dt.datetime(2021, 6, 30, 22, tzinfo=ONE_HOUR_EAST)),
        lambda r: r["adopted"] is not None and r["adopted"] < dt.datetime(2021, 6, 30, 22, tzinfo=ONE_HOUR_EAST),
    ),
    ("adopted eq null", lambda q, P: q.filter(P.adopted.is_null()), lambda r: r["adopted"] is None),
    ("owner_id ne null", lambda q, P: q.filter(P.owner_id.not_null()), lambda r: r["owner_id"] is not None),
    (
        "born ge 2019-01-01 (Edm.Date literal)",
        lambda q, P: q.filter("born ge 2019-01-01"),
        lambda r: r["born"] is not None and r["born"] >= "2019-01-01",
    ),
    (
        "year(born) eq 2019 or month(born) eq 7",
        lambda q, P: q.filter("year(born) eq 2019 or month(born) eq 7"),
        lambda r: r["born"] is not None and (r["born"][:4] == "2019" or r["born"][5:7] == "07"),
    ),
    (
        "(species eq 'dog') or (weight lt 5)",
        lambda q, P: q.filter((P.species == "dog") | (P.weight < 5)),
        lambda r: r["species"] == "dog" or (r["weight"] is not None and r["weight"] < 5),
    ),
    (
        "two filters joined with and",
        lambda q, P: q.filter(P.species == "cat").filter(P.weight >= Decimal("6")),
        lambda r: r["species"] == "cat" and r["weight"] >= 6,
    ),
    ("a filter nothing matches", lambda q, P: q.filter(P.species == "horse"), lambda r: False),
]
for _label, _build, _pred in FILTERS:
    filter_check(_label, _build, _pred)


def order_check(label, build, terms):
    @check(f"$orderby {label}")
    def run(c):
        query = build(c.pets(), c.Pets)
        same_pets(query.all(), ordered(ROWS, *terms), query.as_string())


order_check("weight desc (nulls last)", lambda q, P: q.order_by(P.weight.desc()), [("weight", True)])
order_check("adopted asc (nulls first)", lambda q, P: q.order_by(P.adopted.asc()), [("adopted", False)])
order_check(
    "species asc, name desc",
    lambda q, P: q.order_by(P.species.asc(), P.name.desc()),
    [("species", False), ("name", True)],
)


@check("$filter and $orderby together across pages")
def filter_and_order(c):
    query = c.pets().filter(c.Pets.species == "cat").order_by(c.Pets.name.asc())
    pets, urls = c.counted(c.guest_http, query.all)
    same_pets(pets, ordered(rows_where(lambda r: r["species"] == "cat"), ("name", False)), query.as_string())
    expect(len(urls) == 2, f"4 cats in pages of 2 took {len(urls)} requests")


@check("$skip alone pages on from the offset")
def skip_alone(c):
    query = c.pets().order_by(c.Pets.name.asc()).offset(3)
    same_pets(query.all(), ordered(ROWS, ("name", False))[3:], query.as_string())


@check("$top with $skip, first() and one()")
def top_and_skip(c):
    P = c.Pets
    by_name = ordered(ROWS, ("name", False))
    query = c.pets().order_by(P.name.asc()).offset(1).limit(2)
    same_pets(query.all(), by_name[1:3], query.as_string())
    same(seen(c.pets().order_by(P.weight.desc()).first()), ordered(ROWS, ("weight", True))[0], "heaviest")
    same(seen(c.pets().filter(P.name == "Nemo").one()), rows_where(lambda r: r["name"] == "Nemo")[0], "one()")


@check("$count: all, and filtered")
def counts(c):
    same(c.pets().count(), len(ROWS), "Pets/$count")
    cats = c.pets().filter(c.Pets.species == "cat")
    same(cats.count(), len(rows_where(lambda r: r["species"] == "cat")), "Pets/$count?$filter=species eq 'cat'")


@check("$select across pages: the chosen properties and the key")
def select(c):
    P = c.Pets
    rows = c.pets().select(P.name, P.weight).filter(P.species == "cat").all()
    # The service adds the key for identity (OData allows additional content).
    plain = [{k: v for k, v in row.items() if not k.startswith("@")} for row in rows]
    same({frozenset(r) for r in plain}, {frozenset({"id", "name", "weight"})}, "properties of each row")
    same(
        [{"id": r["id"], "name": r["name"], "weight": Decimal(str(r["weight"]))} for r in plain],
        [{"id": r["id"], "name": r["name"], "weight": r["weight"]} for r in rows_where(lambda r: r["species"] == "cat")],
        "cats' id, name and weight",
    )


@check("$search over the searchable name, case-insensitive")
def search(c):
    rows = c.pets().raw({"$search": "TIG"})
    same([r["name"] for r in rows], ["Tiger", "Tigger"], "$search=TIG")


@check("an entity by key: the client's get() and the canonical URL Pets(4)")
def by_key(c):
    pet = c.pets().get(4)
    same(seen(pet), ROWS[3], "get(4)")
    url = pet.__odata__.instance_url
    same(url, c.url + "Pets(4)", "the client's URL for the entity")
    data = c.guest.default_context.connection.execute_get(url)
    same(data.get("@odata.context"), c.url + "$metadata#Pets/$entity", "@odata.context")
    same(seen(c.Pets.__new__(c.Pets, from_data=data)), ROWS[3], "GET Pets(4)")


@check("an unknown key: not found")
def unknown_key(c):
    try:
        c.pets().get(404)
        raise Failure("get(404) found something")
    except NoResultsFound:
        pass
    odata_error(lambda: c.guest.default_context.connection.execute_get(c.url + "Pets(404)"), 404, "GET Pets(404)")


# --- navigations (Owners needs a signed-in caller) ---------------------------


@check("navigation: pet.owner and owner.pets through their URLs")
def navigation(c):
    Pets, Owners = c.member.entities["Pets"], c.member.entities["Owners"]
    for row in ROWS:
        owner = c.member.query(Pets).get(row["id"]).owner
        if row["owner_id"] is None:
            same(owner, None, f"Pets({row['id']})/owner")
        else:
            same((owner.id, owner.name), (row["owner_id"], OWNER_NAMES[row["owner_id"]]), f"Pets({row['id']})/owner")
    for owner_id, name in OWNERS:
        owner = c.member.query(Owners).get(owner_id)
        same(owner.name, name, f"Owners({owner_id})")
        same(
            [seen(p) for p in owner.pets],
            rows_where(lambda r: r["owner_id"] == owner_id),
            f"Owners({owner_id})/pets",
        )


@check("$expand owner across pages, with no request per entity")
def expand_to_one(c):
    Pets = c.member.entities["Pets"]
    # Only pets with an owner: python-odata 0.8.1 fails on an expanded null
    # (`"owner": null`, which is correct OData) in EntityBase.__new__.
    query = c.member.query(Pets).filter(Pets.owner_id.not_null()).expand(Pets.owner)

    def read():
        return [(seen(p), p.owner.id, p.owner.name) for p in query.all()]

    got, urls = c.counted(c.member_http, read)
    same(
        got,
        [(r, r["owner_id"], OWNER_NAMES[r["owner_id"]]) for r in rows_where(lambda r: r["owner_id"] is not None)],
        query.as_string(),
    )
    same(len(urls), 2, f"requests for 4 pets with their owners: {urls}")


@check("$expand pets (to-many) on Owners")
def expand_to_many(c):
    Owners = c.member.entities["Owners"]
    query = c.member.query(Owners).expand(Owners.pets)

    def read():
        return {o.name: [seen(p) for p in o.pets] for o in query.all()}

    got, urls = c.counted(c.member_http, read)
    same(
        got,
        {name: rows_where(lambda r, i=i: r["owner_id"] == i) for i, name in OWNERS},
        query.as_string(),
    )
    same(len(urls), math.ceil(len(OWNERS) / PAGE_SIZE), f"requests: {urls}")


@check("$filter on a navigation path")
def filter_navigation_path(c):
    Pets = c.member.entities["Pets"]
    # Written out: the client's NavigationProperty has a `name` attribute of its
    # own, so `Pets.owner.name` is the string "owner", not a property path.
    query = c.member.query(Pets).filter("owner/name eq 'Bob'")
    same_pets(query.all(), rows_where(lambda r: r["owner_id"] == 2), query.as_string())


# --- access and errors -------------------------------------------------------


@check("access: a guest gets 401 from Owners, a bad token 401 even on public Pets")
def access(c):
    connection = c.guest.default_context.connection
    odata_error(lambda: connection.execute_get(c.url + "Owners"), 401, "guest GET Owners")
    odata_error(lambda: connection.execute_get(c.url + "Owners/$count", allow_plain_response=True), 401, "guest GET Owners/$count")
    stranger = c.guest.create_context(auth=Bearer("not-a-token"))
    odata_error(lambda: stranger.query(c.Pets).all(), 401, "GET Pets with a bad token")


@check("errors: an unknown property in $filter is a 400 the client reports")
def bad_filter(c):
    e = odata_error(lambda: c.pets().filter("nosuch eq 1").all(), 400, "$filter=nosuch eq 1")
    expect("nosuch" in str(e.message), f"the message does not name the property: {e.message!r}")


# --- the server --------------------------------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def create_database(path):
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO owners (id, name) VALUES (?, ?)", OWNERS)
    db.executemany("INSERT INTO pets VALUES (?, ?, ?, ?, ?, ?, ?, ?)", PETS)
    db.commit()
    db.close()
    return f"sqlite://{path}?mode=rwc"


def sql_literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


class MariaDb:
    """A fresh database on the MySQL/MariaDB server `server_url` names
    (`mysql://user@host:port/db`), filled through the `mariadb` client and
    dropped again on exit. Instants are stored as UTC `DATETIME`s."""

    def __init__(self, server_url):
        url = urlsplit(server_url)
        self.args = ["mariadb", "-h", url.hostname or "127.0.0.1", "-P", str(url.port or 3306),
                     "-u", url.username or "root"]
        if url.password:
            self.args.append(f"-p{url.password}")
        self.name = f"gh_client_{os.getpid()}_{int(time.time())}"
        self.url = urlunsplit((url.scheme, url.netloc, "/" + self.name, "", ""))

    def run(self, sql, database=None):
        args = self.args + ([database] if database else [])
        done = subprocess.run(args, input=sql, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            sys.exit(f"mariadb exited {done.returncode}: {done.stderr}")

    def __enter__(self):
        self.run(f"CREATE DATABASE {self.name}")
        rows = [f"INSERT INTO owners (id, name) VALUES ({i}, {sql_literal(n)});" for i, n in OWNERS]
        for row in PETS:
            adopted = row[5] and instant(row[5]).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
            values = (*row[:5], adopted, *row[6:])
            rows.append(f"INSERT INTO pets VALUES ({', '.join(sql_literal(v) for v in values)});")
        self.run(SCHEMA + "\n".join(rows), self.name)
        return self.url

    def __exit__(self, *_):
        self.run(f"DROP DATABASE IF EXISTS {self.name}")


def cli(binary, env, cwd, *args, stdin=None):
    done = subprocess.run(
        [str(binary), *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        sys.exit(f"gatehouse {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def wait_for_port(port, server, log, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"gatehouse serve exited {server.returncode} before listening:\n{tail(log)}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"gatehouse serve did not listen on port {port} within {seconds}s:\n{tail(log)}")


def tail(path, lines=40):
    text = Path(path).read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:])


def run_checks(client):
    failed = []
    for name, fn in CHECKS:
        try:
            fn(client)
            print(f"ok   {name}")
        except Failure as e:
            failed.append(name)
            print(f"FAIL {name}\n      {e}")
        except Exception:
            failed.append(name)
            print(f"FAIL {name}\n{traceback.format_exc()}")
    return failed


def main():
    binary = Path(os.environ.get("GATEHOUSE_BIN") or REPO / "target" / "debug" / "gatehouse").resolve()
    if not binary.is_file():
        sys.exit(f"{binary} does not exist: run `cargo build` first or set GATEHOUSE_BIN")
    with tempfile.TemporaryDirectory(prefix="gh-odata-client-") as tmp:
        tmp = Path(tmp)
        with (MariaDb(SERVER_URL) if SERVER_URL else contextlib.nullcontext()) as database_url:
            database_url = database_url or create_database(tmp / "db.sqlite")
            print(f"database: {database_url.split('?')[0]}")
            return serve_and_check(binary, tmp, database_url)


def serve_and_check(binary, tmp, database_url):
    port = free_port()
    config = tmp / "Rocket.toml"
    config.write_text(ROCKET_TOML.format(port=port, db=database_url, page_size=PAGE_SIZE))
    # Only this file configures the server and the CLI.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCKET_")}
    env["ROCKET_CONFIG"] = str(config)
    cli(binary, env, tmp, "user", "add", EMAIL, "--password-stdin", stdin=PASSWORD + "\n")
    token = cli(binary, env, tmp, "token", "create", EMAIL, "--name", "odata client").strip().splitlines()[-1]

    log_path = tmp / "server.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen([str(binary), "serve"], cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, server, log_path)
        try:
            client = Client(f"http://127.0.0.1:{port}/odata/", token)
        except Exception:
            traceback.print_exc()
            print(f"\nthe client could not reflect $metadata; last lines of the server log:\n{tail(log_path)}")
            return 1
        failed = run_checks(client)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    if failed:
        print(f"\nlast lines of the server log:\n{tail(log_path)}")
    print(f"\n{len(CHECKS) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
