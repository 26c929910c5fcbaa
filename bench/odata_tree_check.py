#!/usr/bin/env python3
"""Compare the peer's and Gatehouse's answers to one read of bench/odata_tree.sh.

  python3 bench/odata_tree_check.py toplevels|children PEER.json GATEHOUSE.json [ROWS]

Both answers are checked against the tree bench/odata_tree_data.py writes
(node p's children are 10p+1 .. 10p+10, 10 roots, ROWS nodes, default
100,000): the rows and their order (preorder, siblings by key), the count,
DistanceFromRoot, DrillState and LimitedRank. LimitedDescendantCount is
checked on each side by its own reading: Gatehouse counts the descendants in
the same result (DESIGN, the Hierarchy vocabulary's "limited"), CAP every
descendant in the tree; the two are printed, not compared.
Exit 0: both right and the same; 1: the peer gave no answer or a wrong one
(printed); 2: Gatehouse's answer is wrong.
"""
import json
import sys


def children(p, rows):
    return [c for c in range(10 * p + 1, 10 * p + 11) if c <= rows]


def subtree(p, rows):
    n, level = 0, children(p, rows)
    while level:
        n += len(level)
        level = [c for q in level for c in children(q, rows)]
    return n


def expected(name, rows):
    if name == "toplevels":
        out = []
        for root in range(1, 11):
            out.append({"ID": root, "DistanceFromRoot": 0, "DrillState": "expanded", "shown": 10, "all": subtree(root, rows)})
            for c in children(root, rows):
                out.append({"ID": c, "DistanceFromRoot": 1, "DrillState": "collapsed" if children(c, rows) else "leaf",
                            "shown": 0, "all": subtree(c, rows)})
        for rank, row in enumerate(out):
            row["LimitedRank"] = rank
        return out
    if name == "children":
        return [{"ID": c, "DrillState": "collapsed" if children(c, rows) else "leaf", "all": subtree(c, rows)}
                for c in children(7, rows)]
    sys.exit("odata_tree_check.py: unknown read " + name)


def wrong(name, answer, want, descendants):
    """What is wrong with an answer, or None."""
    if "value" not in answer:
        return "no rows: " + json.dumps(answer)[:300]
    value = answer["value"]
    if answer.get("@odata.count") != len(want):
        return "@odata.count %r, expected %d" % (answer.get("@odata.count"), len(want))
    if [r["ID"] for r in value] != [w["ID"] for w in want]:
        return "rows %s…, expected %s…" % ([r["ID"] for r in value][:12], [w["ID"] for w in want][:12])
    for r, w in zip(value, want):
        if r.get("name") != "node %d" % w["ID"]:
            return "node %d: name %r" % (w["ID"], r.get("name"))
        for key in ("DistanceFromRoot", "DrillState", "LimitedRank"):
            if key in w and r.get(key) != w[key]:
                return "node %d: %s %r, expected %r" % (w["ID"], key, r.get(key), w[key])
        if descendants in w and "LimitedDescendantCount" in r and r["LimitedDescendantCount"] != w[descendants]:
            return "node %d: LimitedDescendantCount %r, expected %r" % (w["ID"], r["LimitedDescendantCount"], w[descendants])
    return None


def main():
    name, peer_file, gh_file = sys.argv[1:4]
    rows = int(sys.argv[4]) if len(sys.argv) > 4 else 100000
    want = expected(name, rows)
    try:
        gh = json.load(open(gh_file))
    except ValueError:
        gh = {}
    problem = wrong(name, gh, want, "shown")
    if problem:
        print("   %s: Gatehouse's answer is wrong: %s" % (name, problem))
        sys.exit(2)
    try:
        peer = json.load(open(peer_file))
    except ValueError:
        peer = {"error": open(peer_file).read()[:300]}
    problem = wrong(name, peer, want, "all")
    if problem:
        print("   %s: the peer gives no comparable answer: %s" % (name, problem))
        sys.exit(1)
    first = gh["value"][0]
    print("   %s: the same %d rows in the same order with the same computed values; LimitedDescendantCount of "
          "node %d: Gatehouse %s (in the result), the peer %s (in the tree)"
          % (name, len(want), first["ID"], first.get("LimitedDescendantCount", "—"),
             peer["value"][0].get("LimitedDescendantCount", "—")))


if __name__ == "__main__":
    main()
