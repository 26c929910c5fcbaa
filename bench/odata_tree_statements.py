#!/usr/bin/env python3
"""Print Gatehouse's tree statements from an engine's statement log.

  python3 bench/odata_tree_statements.py postgres|mariadb LOG [N]

The last N (default 2) distinct statements holding WITH RECURSIVE, one per
line, in the order they ran, each with its parameters written in
(PostgreSQL: from the DETAIL line after `execute`; MariaDB's general log
writes an Execute with its values already in), ready for EXPLAIN.
"""
import re
import sys


def postgres(lines):
    for i, line in enumerate(lines):
        m = re.search(r"LOG:  execute [^:]+: (WITH RECURSIVE .*)$", line)
        if not m:
            continue
        statement = m.group(1)
        detail = lines[i + 1] if i + 1 < len(lines) else ""
        p = re.search(r"DETAIL:  [Pp]arameters: (.*)$", detail)
        if p:
            # The highest numbers first, so that $1 never replaces the start of $10.
            pairs = re.findall(r"(\$\d+) = ('(?:[^']|'')*'|NULL)", p.group(1))
            for name, value in sorted(pairs, key=lambda nv: -int(nv[0][1:])):
                statement = re.sub(re.escape(name) + r"(?!\d)", value, statement)
        yield statement


def mariadb(lines):
    for line in lines:
        m = re.search(r"\sExecute\s+(WITH RECURSIVE .*)$", line)
        if m:
            yield m.group(1)


def main():
    engine, log = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    lines = open(log, errors="replace").read().splitlines()
    found = list(postgres(lines) if engine == "postgres" else mariadb(lines))
    distinct = list(dict.fromkeys(reversed(found)))[:n]
    for statement in reversed(distinct):
        print(statement)


if __name__ == "__main__":
    main()
