#!/usr/bin/env python3
"""What each engine is asked: statements and plans for bench/odata.sh (phase plans).

Reads the statements one Gatehouse request per query sent, as logged between
marker statements (`SELECT 'gh-plan-marker <query>'`):
  --pg-log FILE  PostgreSQL's server log, written with log_min_duration_statement=0
                 and auto_explain (log_analyze) loaded in Gatehouse's sessions
  --my-log FILE  rows of mysql.general_log (event_time, thread_id, command_type,
                 argument), `mariadb -N -B` output
then runs EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL (PREPARE + EXECUTE with the
logged parameters) and EXPLAIN + ANALYZE on MariaDB (the logged Execute text,
parameters substituted by the server) against --db (gh_bench), and prints Markdown
with a one-line finding per query (index used, sort or not).
With --pg-expect (odata_raw's `# <query>: <text>  binds [...]` lines) and
--my-expect (odata_raw --inline's `<query>\t<statement>` lines) it also says
whether the logged statements are the ones the benchmark's limits run.
Standard library only; drives psql and mariadb.
"""
import argparse
import re
import subprocess

NAMES = ["q1-default-page", "q2-filter-orderby-top200", "q3-count-top50", "q4-skip90000-top100"]
PSQL = ["psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-X", "-q", "-d"]  # + database
MYSQL = ["mariadb", "-h", "127.0.0.1", "-P", "3306", "-u", "root"]  # + options, database
DB = "gh_bench"
ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+ \[(\d+)\] (\S*@\S*)? ?(\w+):  (.*)$")


def bind_values(binds):
    """odata_raw's `[Int(1001), Text("cat3")]` -> ['1001', 'cat3']"""
    return [m.group(1) if m.group(1) is not None else m.group(2)
            for m in re.finditer(r'\w+\((?:"((?:[^"\\]|\\.)*)"|([^)]*))\)', binds)]


def pg_expected(path):
    """{query: (text, [values])} from odata_raw's output."""
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"# (q\d[\w-]*): (.*)  binds (\[.*\])$", line.rstrip("\n"))
        if m:
            out[m.group(1)] = (m.group(2), bind_values(m.group(3)))
    return out


def my_expected(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        name, _, sql = line.rstrip("\n").partition("\t")
        out[name] = sql
    return out


def sh(cmd, sql):
    r = subprocess.run(cmd, input=sql, text=True, capture_output=True)
    return (r.stdout + r.stderr).rstrip()


def by_query(items, text_of):
    """Splits a list of log items at the markers: {query name: [items]}."""
    out, cur = {}, None
    for it in items:
        m = re.search(r"gh-plan-marker ([\w-]+)", text_of(it))
        if m:
            cur = m.group(1) if m.group(1) in NAMES else None
            continue
        if cur:
            out.setdefault(cur, []).append(it)
    return out


# --- PostgreSQL ----------------------------------------------------------------
def pg_entries(path):
    entries = []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = ENTRY.match(line.rstrip("\n"))
        if m:
            entries.append({"pid": m.group(1), "who": m.group(2) or "", "level": m.group(3), "text": m.group(4)})
        elif entries:
            entries[-1]["text"] += "\n" + line.rstrip("\n")
    return [e for e in entries if e["who"].endswith("@" + DB)]


def pg_params(detail):
    """'$1 = 'cat3', $2 = NULL' -> ["'cat3'", 'NULL']"""
    return [m.group(2) for m in re.finditer(r"\$(\d+) = ('(?:[^']|'')*'|NULL)", detail)]


def pg_finding(plan):
    nodes = re.findall(r"(Index Only Scan(?: Backward)? using \w+|Index Scan(?: Backward)? using \w+|Seq Scan on \w+|"
                       r"Bitmap Index Scan on \w+|Bitmap Heap Scan on \w+|Incremental Sort|Sort(?= )|"
                       r"Aggregate|Limit)", plan)
    sort = "Sort" in nodes or "Incremental Sort" in nodes
    scans = [n for n in nodes if "Scan" in n]
    return "%s; %s" % (", ".join(dict.fromkeys(scans)) or "no scan", "**sort**" if sort else "no sort")


def pg_unquote(param):
    return None if param == "NULL" else param[1:-1].replace("''", "'")


def pg_section(path, expected=None):
    entries = pg_entries(path)
    groups = by_query(entries, lambda e: e["text"])
    out = []
    for name in NAMES:
        es = groups.get(name, [])
        out.append("#### PostgreSQL, %s\n" % name)
        stmts = []
        i = 0
        while i < len(es):
            e = es[i]
            m = re.match(r"duration: [0-9.]+ ms  (?:execute [^:]*|statement): (.*)", e["text"], re.S)
            if m and e["level"] == "LOG":
                params = []
                if i + 1 < len(es) and es[i + 1]["level"] == "DETAIL" and "parameters:" in es[i + 1]["text"]:
                    params = pg_params(es[i + 1]["text"])
                stmts.append((m.group(1).strip(), params))
            i += 1
        autos = [e["text"] for e in es if re.match(r"duration: [0-9.]+ ms  plan:", e["text"])]
        if not stmts:
            out.append("(no statement logged)\n")
        if expected is not None:
            selects = [(sql, [pg_unquote(p) for p in params]) for sql, params in stmts
                       if re.match(r"\s*(SELECT|WITH)\b", sql, re.I)]
            want = expected.get(name)
            if want and selects == [want]:
                out.append("- the limit's statement: **same** text and values as logged (one statement per request)\n")
            else:
                out.append("- the limit's statement: **DIFFERS** from what was logged; the limit runs\n\n```sql\n%s\n```\n"
                           "values %s\n" % (want[0] if want else "(none)", want[1] if want else "-"))
        for sql, params in stmts:
            out.append("```sql\n%s\n```" % sql)
            if params:
                out.append("parameters: %s\n" % ", ".join(params))
            if re.match(r"\s*(SELECT|WITH)\b", sql, re.I):
                explain = sh(PSQL + [DB], "PREPARE gh_p AS %s;\nEXPLAIN (ANALYZE, BUFFERS) EXECUTE gh_p%s;\nDEALLOCATE gh_p;\n"
                             % (sql, "(%s)" % ", ".join(params) if params else ""))
                out.append("- finding (EXPLAIN ANALYZE here): %s" % pg_finding(explain))
                out.append("\n```\n%s\n```\n" % explain)
        for a in autos:
            out.append("- finding (auto_explain, in Gatehouse's own session): %s" % pg_finding(a))
            out.append("\n```\n%s\n```\n" % a)
    return out


# --- MariaDB ---------------------------------------------------------------------
def my_unescape(s):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "0": "\0", "\\": "\\"}.get(m.group(1), m.group(1)), s)


def my_rows(path):
    rows = []
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.rstrip("\n").split("\t", 3)
        if len(f) == 4:
            rows.append({"time": f[0], "thread": f[1], "cmd": f[2], "arg": my_unescape(f[3])})
    return rows


def my_finding(explain):
    lines = explain.splitlines()
    if len(lines) < 2:
        return "no EXPLAIN output"
    head = lines[0].split("\t")
    found = []
    for line in lines[1:]:
        row = dict(zip(head, line.split("\t")))
        extra = row.get("Extra", "")
        found.append("table %s: type %s, key %s%s" % (row.get("table"), row.get("type"), row.get("key"),
                                                    ", **filesort**" if "filesort" in extra else ", no filesort")
                     + (" (%s)" % extra if extra and extra != "NULL" else ""))
    return "; ".join(found)


def my_section(path, expected=None):
    rows = my_rows(path)
    groups = by_query(rows, lambda r: r["arg"])
    out = []
    for name in NAMES:
        rs = groups.get(name, [])
        out.append("#### MariaDB, %s\n" % name)
        stmts = [r for r in rs if r["cmd"] in ("Execute", "Query")
                 and not r["arg"].lstrip().upper().startswith(("SET ", "SHOW ", "SELECT @@", "SELECT 'GH-PLAN"))]
        sets = [r["arg"] for r in rs if r["cmd"] == "Query" and r["arg"].lstrip().upper().startswith("SET ")]
        if sets:
            out.append("session set-up seen: %s\n" % "; ".join(dict.fromkeys(sets)))
        if not stmts:
            out.append("(no statement logged)\n")
        if expected is not None:
            selects = [r["arg"].strip() for r in stmts if re.match(r"\s*(SELECT|WITH)\b", r["arg"], re.I)]
            want = expected.get(name)
            if want and selects == [want]:
                out.append("- the limit's statement: **same** text as logged, values substituted (one statement per request)\n")
            else:
                out.append("- the limit's statement: **DIFFERS** from what was logged; the limit runs\n\n```sql\n%s\n```\n"
                           % (want or "(none)"))
        for r in stmts:
            sql = r["arg"].strip()
            out.append("```sql\n%s\n```" % sql)
            if re.match(r"\s*(SELECT|WITH)\b", sql, re.I):
                explain = sh(MYSQL + ["-B", DB], "EXPLAIN %s;\n" % sql)
                analyze = sh(MYSQL + ["-t", DB], "ANALYZE %s;\n" % sql)
                out.append("- finding (EXPLAIN): %s" % my_finding(explain))
                out.append("\n```\n%s\n```\n" % analyze)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", help="a heading for the build read, if several are compared")
    ap.add_argument("--db", default="gh_bench", help="the database Gatehouse read (both engines)")
    ap.add_argument("--pg-log")
    ap.add_argument("--my-log")
    ap.add_argument("--pg-expect", help="odata_raw's output for PostgreSQL (statements and binds)")
    ap.add_argument("--my-expect", help="odata_raw --inline's output for MariaDB")
    a = ap.parse_args()
    global DB
    DB = a.db
    print("## Statements and plans%s\n" % (" (%s build)" % a.build if a.build else ""))
    if a.pg_log:
        print("### PostgreSQL\n")
        print("\n".join(pg_section(a.pg_log, pg_expected(a.pg_expect) if a.pg_expect else None)))
    if a.my_log:
        print("### MariaDB\n")
        print("\n".join(my_section(a.my_log, my_expected(a.my_expect) if a.my_expect else None)))


if __name__ == "__main__":
    main()
