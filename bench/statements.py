#!/usr/bin/env python3
"""Print the statements a benchmark is about from an engine's statement log.

  python3 bench/statements.py postgres|mariadb LOG REGEX [N]

The last N (default 2) distinct statements matching REGEX (from their
start), one per line, in the order they ran, each with its parameters
written in (PostgreSQL: from the DETAIL line after `execute`; MariaDB's
general log writes an Execute with its values already in), ready for
EXPLAIN. bench/odata_apply.sh asks for Gatehouse's groupings
(`SELECT .*GROUP BY`), bench/odata_tree.sh for the tree reads (Gatehouse's
read a derived set, `gh_scoped`, inside the page's statement; CAP's start
with WITH RECURSIVE).
"""
import re
import sys


def postgres(lines, wanted):
    for i, line in enumerate(lines):
        m = re.search(r"LOG:  execute [^:]+: (.*)$", line)
        if not m or not re.match(wanted, m.group(1)):
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


def mariadb(lines, wanted):
    for line in lines:
        m = re.search(r"\sExecute\s+(.*)$", line)
        if m and re.match(wanted, m.group(1)):
            yield m.group(1)


def main():
    engine, log, wanted = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    lines = open(log, errors="replace").read().splitlines()
    found = list(postgres(lines, wanted) if engine == "postgres" else mariadb(lines, wanted))
    distinct = list(dict.fromkeys(reversed(found)))[:n]
    for statement in reversed(distinct):
        print(statement)


if __name__ == "__main__":
    main()
