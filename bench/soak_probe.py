#!/usr/bin/env python3
"""Clients for bench/soak.sh (standard library only).

  realuser     sign-ins of one real user from another client address while a
               flood runs; prints each try and p50/max
  kill-record  sign-ins, forgot-password requests and a password change
               (POST /auth/password) against the instances until a stop file
               appears; every request answered 2xx is written to a record file
               the moment its answer arrives
  kill-verify  checks every record: sessions still open /dashboard on every
               instance, every answered forgot-password request produced a mail,
               new passwords sign in, a token made before the kill still reads
  pg-probe     a light load (OData with a bearer token, sign-ins) on every
               instance until a stop file appears; one line per request
  pg-analyze   reads the pg-probe lines against the times PostgreSQL stopped
               and came back
  tf-enrol     turns two-factor sign-in on for users (password, then a first
               TOTP code); writes their secrets to a JSON file
  tf-probe     two-factor sign-ins with the right code (password, then the
               code of a step not used yet) of enrolled users, spread over the
               instances, until a stop file appears; one summary line

Every request carries X-Forwarded-For (the instances trust 127.0.0.1), so
the probes count against their own client addresses, not the load's.
"""

import argparse
import base64
import hashlib
import hmac
import struct
import http.client
import json
import os
import random
import re
import statistics
import sys
import threading
import time
import urllib.parse


def rand_ip(prefix="10.200"):
    return "%s.%d.%d" % (prefix, random.randint(0, 255), random.randint(1, 254))


def request(url, method, path, body=None, headers=None, timeout=30.0):
    """One request on a fresh connection: (status, headers, body text).

    status is a string "conn:<error>" when no answer came."""
    u = urllib.parse.urlsplit(url)
    h = {"Accept": "application/json"}
    h.update(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8", "replace")
        return resp.status, resp.msg, text
    except Exception as e:  # noqa: BLE001 - any failure to get an answer
        return "conn:" + type(e).__name__, None, str(e)
    finally:
        conn.close()


def session_cookie(msg, name="gatehouse_session"):
    if msg is None:
        return None
    for value in msg.get_all("Set-Cookie") or []:
        pair = value.split(";", 1)[0].strip()
        if pair.startswith(name + "="):
            return pair
    return None


def sign_in(url, email, password, ip=None, timeout=30.0):
    return request(url, "POST", "/auth/login", {"email": email, "password": password},
                   {"X-Forwarded-For": ip or rand_ip()}, timeout=timeout)


def pct(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = max(0, min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1)))))
    return values[k]


def totp(secret, step):
    """RFC 6238 with HMAC-SHA-1, 6 digits, for the 30-second step `step`."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return "%06d" % (value % 1000000)


# ---------------------------------------------------------------- two-factor
def cmd_tf_enrol(a):
    secrets = {}
    for email in a.emails.split(","):
        ip = rand_ip("10.210")
        status, msg, body = sign_in(a.url, email, a.password, ip=ip)
        cookie = session_cookie(msg)
        if status != 200 or not cookie:
            sys.exit("tf-enrol: sign-in of %s answered %s %s" % (email, status, body[:200]))
        headers = {"Cookie": cookie, "X-Forwarded-For": ip}
        status, _, body = request(a.url, "POST", "/auth/two-factor", {"password": a.password}, headers)
        if status != 200:
            sys.exit("tf-enrol: enrolment of %s answered %s %s" % (email, status, body[:200]))
        secret = json.loads(body)["secret"]
        code = totp(secret, int(time.time()) // 30)
        status, _, body = request(a.url, "POST", "/auth/two-factor/confirm", {"code": code}, headers)
        if status != 200:
            sys.exit("tf-enrol: confirmation of %s answered %s %s" % (email, status, body[:200]))
        secrets[email] = {"secret": secret, "last_step": int(time.time()) // 30}
    with open(a.out, "w") as f:
        json.dump(secrets, f)
    print("TFENROL users=%d" % len(secrets))


def cmd_tf_probe(a):
    with open(a.secrets) as f:
        users = json.load(f)
    urls = a.urls.split(",")
    statuses, times, i = {}, [], 0
    while not os.path.exists(a.stop):
        for email, user in users.items():
            if os.path.exists(a.stop):
                break
            step = int(time.time()) // 30
            # A step is accepted once per user: the next unused one, up to
            # one ahead of the clock.
            use = max(step, user["last_step"] + 1)
            if use > step + 1:
                continue
            url = urls[i % len(urls)]
            i += 1
            ip = rand_ip("10.220")
            t0 = time.time()
            status, msg, body = sign_in(url, email, a.password, ip=ip)
            cookie = session_cookie(msg)
            if status == 200 and cookie and "two_factor_required" in body:
                status, _, body = request(url, "POST", "/auth/two-factor-challenge",
                                          {"code": totp(user["secret"], use)},
                                          {"Cookie": cookie, "X-Forwarded-For": ip})
                user["last_step"] = use
                if status == 200 and "login_success" not in body:
                    status = "200-not-signed-in"
            else:
                status = "password:%s" % status
            times.append((time.time() - t0) * 1000)
            statuses[str(status)] = statuses.get(str(status), 0) + 1
            if status != 200:
                print("tf-probe %s via %s -> %s %s" % (email, url, status, body[:160]), flush=True)
        time.sleep(a.pause)
    ok = statuses.get("200", 0)
    print("TFPROBE sign_ins=%d ok=%d p50_ms=%.1f max_ms=%.1f statuses=%s" % (
        len(times), ok, pct(times, 50) if times else 0.0, max(times) if times else 0.0,
        ",".join("%s:%d" % kv for kv in sorted(statuses.items()))))


# ---------------------------------------------------------------- realuser
def cmd_realuser(a):
    urls = a.urls.split(",")
    times, statuses = [], {}
    for i in range(a.tries):
        url = urls[i % len(urls)]
        t0 = time.time()
        if a.until and t0 > a.until:
            break
        status, _, body = sign_in(url, a.email, a.password, ip=a.ip, timeout=30)
        ms = (time.time() - t0) * 1000
        times.append(ms)
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        print("try %2d at +%.1f s %s -> %s in %.1f ms %s" % (i + 1, t0 - a.t0, url, status, ms,
              "" if status == 200 else body[:120]), flush=True)
        time.sleep(max(0.0, a.interval - ms / 1000))
    ok = statuses.get("200", 0)
    print("REALUSER tries=%d ok=%d p50_ms=%.1f max_ms=%.1f statuses=%s" % (
        len(times), ok, statistics.median(times), max(times),
        ",".join("%s:%d" % kv for kv in sorted(statuses.items()))))


# ---------------------------------------------------------------- kill-record
def cmd_kill_record(a):
    urls = dict(pair.split("=", 1) for pair in a.urls.split(","))
    victim = a.victim
    others = [n for n in urls if n != victim]
    stop = lambda: os.path.exists(a.stop)  # noqa: E731
    out = open(a.out, "a", buffering=1)
    lock = threading.Lock()
    stats = {}
    forgot_next = [0]

    def note(kind, status):
        with lock:
            key = "%s:%s" % (kind, status)
            stats[key] = stats.get(key, 0) + 1

    def record(obj):
        obj["t"] = time.time()
        with lock:
            out.write(json.dumps(obj) + "\n")
            out.flush()

    def pick():
        # most of the traffic goes to the instance that is killed
        if not others or random.random() < 0.75:
            return victim
        return random.choice(others)

    def signins():
        while not stop():
            name = pick()
            email = "ks-%d@example.org" % random.randint(1, a.session_users)
            status, msg, body = sign_in(urls[name], email, a.password, timeout=15)
            note("signin@" + name, status)
            if status == 200 and "login_success" in body:
                cookie = session_cookie(msg)
                record({"kind": "session", "instance": name, "email": email, "cookie": cookie})
            elif not isinstance(status, int):
                time.sleep(0.05)

    def forgots():
        while not stop():
            with lock:
                forgot_next[0] += 1
                n = forgot_next[0]
            if n > a.forgot_users:
                time.sleep(0.2)
                continue
            name = pick()
            email = "kf-%d@example.org" % n
            status, _, body = request(urls[name], "POST", "/auth/forgot-password", {"email": email},
                                      {"X-Forwarded-For": rand_ip()}, timeout=15)
            note("forgot@" + name, status)
            if status == 200 and "reset_link_sent" in body:
                record({"kind": "forgot", "instance": name, "email": email})
            time.sleep(a.forgot_pause)

    def password_change():
        # a password reset (the mailed token) through the instance that is killed
        time.sleep(a.pw_after)
        url = urls[victim]
        status, _, body = request(url, "POST", "/auth/reset-password", {
            "token": a.pw_token, "email": a.pw_email, "password": a.new_password,
            "password_confirmation": a.new_password}, {"X-Forwarded-For": rand_ip()})
        note("reset-password@" + victim, status)
        if status == 200 and "reset_success" in body:
            record({"kind": "password", "via": "POST /auth/reset-password", "instance": victim,
                    "email": a.pw_email, "old": a.password, "new": a.new_password})
        else:
            print("password reset answered %s %s" % (status, body[:200]), file=sys.stderr)

    workers = [threading.Thread(target=signins) for _ in range(a.signin_threads)]
    workers += [threading.Thread(target=forgots) for _ in range(a.forgot_threads)]
    workers.append(threading.Thread(target=password_change))
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("KILLRECORD " + " ".join("%s=%d" % kv for kv in sorted(stats.items())))


# ---------------------------------------------------------------- kill-verify
ADDRESS = re.compile(r"[A-Za-z0-9._%+-]+@example\.org")


def mail_counts(maildir, cache):
    for name in os.listdir(maildir):
        if not name.endswith(".eml") or name in cache:
            continue
        path = os.path.join(maildir, name)
        try:
            with open(path, "r", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        head = text.split("\r\n\r\n", 1)[0].split("\n\n", 1)[0]
        to = [line for line in re.split(r"\r?\n(?![ \t])", head) if line.lower().startswith("to:")]
        cache[name] = ADDRESS.findall(to[0]) if to else []
    counts = {}
    for addresses in cache.values():
        for address in addresses:
            counts[address.lower()] = counts.get(address.lower(), 0) + 1
    return counts


def cmd_kill_verify(a):
    urls = dict(pair.split("=", 1) for pair in a.urls.split(","))
    records = [json.loads(line) for line in open(a.records) if line.strip()]
    sessions = [r for r in records if r["kind"] == "session"]
    forgots = [r for r in records if r["kind"] == "forgot"]
    passwords = [r for r in records if r["kind"] == "password"]
    failures = []
    ok = True

    # sessions: every cookie answered 200 must still open the dashboard everywhere
    by_made = {}
    for name, url in sorted(urls.items()):
        good = 0
        for r in sessions:
            status, _, body = request(url, "GET", "/dashboard", headers={"Cookie": r["cookie"] or ""})
            if status == 200:
                good += 1
            else:
                failures.append("session made on %s at %.3f -> %s on %s: %s" % (
                    r["instance"], r["t"], status, name, body[:120]))
        made = {}
        for r in sessions:
            made[r["instance"]] = made.get(r["instance"], 0) + 1
        by_made = made
        line = "sessions recorded=%d (%s) open the dashboard on %s: %d/%d" % (
            len(sessions), ", ".join("made on %s %d" % kv for kv in sorted(made.items())),
            name, good, len(sessions))
        print("KILLVERIFY " + line)
        ok = ok and good == len(sessions)
    if a.t_kill:
        last = [r for r in records if a.t_kill - 1.0 <= r["t"] <= a.t_kill]
        kinds = {}
        for r in last:
            key = "%s on %s" % (r["kind"], r["instance"])
            kinds[key] = kinds.get(key, 0) + 1
        print("KILLVERIFY answered 2xx in the last second before the kill: %s; last answer %.3f s before it" % (
            ", ".join("%s %d" % kv for kv in sorted(kinds.items())) or "none",
            a.t_kill - max((r["t"] for r in records if r["t"] <= a.t_kill), default=a.t_kill)))

    # passwords: the new one signs in everywhere, the old one no longer does
    for r in passwords + [json.loads(p) for p in a.password_record]:
        for name, url in sorted(urls.items()):
            new_status, _, _ = sign_in(url, r["email"], r["new"])
            old_status, _, _ = sign_in(url, r["email"], r["old"])
            good = new_status == 200 and old_status == 422
            ok = ok and good
            print("KILLVERIFY password change (%s, answered at %.3f) on %s: new password %s, old password %s %s" % (
                r["via"], r["t"], name, new_status, old_status, "ok" if good else "WRONG"))

    # token made before the kill
    if a.token:
        for name, url in sorted(urls.items()):
            status, _, body = request(url, "GET", "/odata/Users?$top=1",
                                      headers={"Authorization": "Bearer " + a.token})
            good = status == 200
            ok = ok and good
            print("KILLVERIFY token created before the kill on %s: GET /odata/Users -> %s" % (name, status))

    # forgot-password: every answered request ends as a mail, within mail_wait
    wanted = {r["email"].lower() for r in forgots}
    cache = {}
    t0 = time.time()
    while True:
        counts = mail_counts(a.maildir, cache)
        missing = sorted(e for e in wanted if counts.get(e, 0) == 0)
        if not missing or time.time() - t0 > a.mail_wait:
            break
        time.sleep(2)
    waited = time.time() - t0
    mailed_all = {e: c for e, c in counts.items() if e.startswith("kf-")}
    dupes = sum(1 for e in wanted if counts.get(e, 0) > 1)
    unrecorded = sorted(e for e in mailed_all if e not in wanted)
    on_victim = sum(1 for r in forgots if r["instance"] == a.victim)
    print("KILLVERIFY forgot-password answered 200: %d (%d on the killed instance); mailed: %d; "
          "missing: %d; more than one mail: %d; waited %.0f s for the mails; "
          "mails for requests that got no answer: %d" % (
              len(wanted), on_victim, len(wanted) - len(missing), len(missing), dupes, waited,
              len(unrecorded)))
    if missing:
        failures.append("no mail for: " + ", ".join(missing[:20]))
    ok = ok and not missing
    for f in failures[:20]:
        print("KILLVERIFY failure: " + f)
    print("KILLVERIFY result=%s" % ("ok" if ok else "lost"))
    sys.exit(0 if ok else 1)


# ---------------------------------------------------------------- reset-token
def cmd_reset_token(a):
    """Waits for the reset mail of --email in --maildir; prints its token."""
    import email
    from email import policy
    link = re.compile(r"/password/reset/([A-Za-z0-9_\-]+)\?email=")
    deadline = time.time() + a.wait
    while time.time() < deadline:
        for name in sorted(os.listdir(a.maildir)):
            if not name.endswith(".eml"):
                continue
            with open(os.path.join(a.maildir, name), "rb") as f:
                msg = email.message_from_binary_file(f, policy=policy.default)
            if a.email.lower() not in str(msg.get("To", "")).lower():
                continue
            for part in msg.walk():
                if part.get_content_type() == "text/plain":
                    m = link.search(part.get_content())
                    if m:
                        print(m.group(1))
                        return
        time.sleep(0.5)
    sys.exit("no reset mail for %s within %.0f s" % (a.email, a.wait))


# ---------------------------------------------------------------- pg-probe
def cmd_pg_probe(a):
    urls = dict(pair.split("=", 1) for pair in a.urls.split(","))
    out = open(a.out, "a", buffering=1)
    lock = threading.Lock()

    def loop(name, kind):
        url = urls[name]
        while not os.path.exists(a.stop):
            t0 = time.time()
            if kind == "odata":
                status, msg, body = request(url, "GET", "/odata/Users?$top=5&$count=true",
                                            headers={"Authorization": "Bearer " + a.token}, timeout=60)
                good = status == 200 and "@odata.context" in body
            else:
                status, msg, body = sign_in(url, a.email, a.password, timeout=60)
                good = status == 200 and "login_success" in body
            t1 = time.time()
            line = {"instance": name, "kind": kind, "start": t0, "end": t1, "status": status,
                    "ok": good}
            if not good:
                line["body"] = body[:160]
                line["retry_after"] = msg.get("Retry-After") if msg is not None else None
            with lock:
                out.write(json.dumps(line) + "\n")
            time.sleep(a.pause)

    threads = [threading.Thread(target=loop, args=(n, k)) for n in urls for k in ("odata", "login")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def cmd_pg_analyze(a):
    rows = [json.loads(line) for line in open(a.records) if line.strip()]
    t_stop, t_up = a.t_stop, a.t_up
    fails = [r for r in rows if not r["ok"]]
    outside = [r for r in fails if r["end"] < t_stop or r["start"] > t_up + a.grace]
    statuses = {}
    for r in fails:
        key = str(r["status"])
        body = r.get("body", "")
        m = re.search(r'"(?:message|code)"\s*:\s*"([a-z_]+)"', body)
        if m:
            key += " " + m.group(1)
        if isinstance(r["status"], int):
            key += " (Retry-After: %s)" % (r.get("retry_after") or "none")
        statuses[key] = statuses.get(key, 0) + 1
    print("PGRESTART requests=%d ok=%d failed=%d; failed while down (stop .. up+%gs): %d; outside: %d" % (
        len(rows), len(rows) - len(fails), len(fails), a.grace, len(fails) - len(outside), len(outside)))
    print("PGRESTART failure answers: " + (", ".join("%s ×%d" % kv for kv in sorted(statuses.items())) or "none"))
    if fails:
        last = max(r["end"] for r in fails) - t_up
        print("PGRESTART failed requests took p50 %.0f ms, max %.0f ms to answer; first failure answered %.2f s after the stop began, last one %.2f s %s PostgreSQL was ready" % (
            pct([1000 * (r["end"] - r["start"]) for r in fails], 50),
            max(1000 * (r["end"] - r["start"]) for r in fails),
            min(r["end"] for r in fails) - t_stop, abs(last), "after" if last >= 0 else "before"))
    # requests sent while it was down: answered how, and how long they were held
    during = [r for r in rows if t_stop <= r["start"] <= t_up]
    held_ok = [r for r in during if r["ok"]]
    if during:
        print("PGRESTART requests sent while it was down: %d; answered 2xx after waiting: %d (held up to %.2f s), failed: %d (after up to %.2f s)" % (
            len(during), len(held_ok), max((r["end"] - r["start"] for r in held_ok), default=0.0),
            len(during) - len(held_ok),
            max((r["end"] - r["start"] for r in during if not r["ok"]), default=0.0)))
    worst = 0.0
    for name in sorted({r["instance"] for r in rows}):
        for kind in ("odata", "login"):
            series = [r for r in rows if r["instance"] == name and r["kind"] == kind]
            after = [r["end"] for r in series if r["ok"] and r["end"] >= t_up]
            first = min(after) - t_up if after else float("inf")
            worst = max(worst, first)
            n_fail = sum(1 for r in series if not r["ok"])
            print("PGRESTART %s %s: %d requests, %d failed, first success %.2f s after PostgreSQL was back" % (
                name, kind, len(series), n_fail, first))
    for r in outside[:10]:
        print("PGRESTART outside the window: %s" % json.dumps(r))
    print("PGRESTART recovery_s=%.2f outside=%d" % (worst, len(outside)))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("realuser")
    s.add_argument("--urls", required=True)
    s.add_argument("--email", required=True)
    s.add_argument("--password", required=True)
    s.add_argument("--ip", required=True)
    s.add_argument("--tries", type=int, default=12)
    s.add_argument("--interval", type=float, default=2.0)
    s.add_argument("--t0", type=float, default=0.0, help="flood start (epoch seconds)")
    s.add_argument("--until", type=float, default=0.0, help="no try starts after this (epoch seconds)")
    s = sub.add_parser("kill-record")
    s.add_argument("--urls", required=True, help="name=url,name=url")
    s.add_argument("--victim", required=True)
    s.add_argument("--password", required=True)
    s.add_argument("--session-users", type=int, default=20)
    s.add_argument("--forgot-users", type=int, default=400)
    s.add_argument("--forgot-pause", type=float, default=0.05)
    s.add_argument("--signin-threads", type=int, default=4)
    s.add_argument("--forgot-threads", type=int, default=2)
    s.add_argument("--pw-email", required=True)
    s.add_argument("--pw-token", required=True, help="a live reset token of --pw-email")
    s.add_argument("--new-password", required=True)
    s.add_argument("--pw-after", type=float, default=3.0)
    s.add_argument("--stop", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("kill-verify")
    s.add_argument("--urls", required=True)
    s.add_argument("--victim", required=True)
    s.add_argument("--records", required=True)
    s.add_argument("--maildir", required=True)
    s.add_argument("--mail-wait", type=float, default=130)
    s.add_argument("--token", default="")
    s.add_argument("--t-kill", type=float, default=0.0)
    s.add_argument("--password-record", action="append", default=[],
                   help='JSON {"via","t","email","old","new"} of a change made elsewhere')
    s = sub.add_parser("reset-token")
    s.add_argument("--maildir", required=True)
    s.add_argument("--email", required=True)
    s.add_argument("--wait", type=float, default=30)
    s = sub.add_parser("pg-probe")
    s.add_argument("--urls", required=True)
    s.add_argument("--token", required=True)
    s.add_argument("--email", required=True)
    s.add_argument("--password", required=True)
    s.add_argument("--pause", type=float, default=0.1)
    s.add_argument("--stop", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("pg-analyze")
    s.add_argument("--records", required=True)
    s.add_argument("--t-stop", type=float, required=True)
    s.add_argument("--t-up", type=float, required=True)
    s.add_argument("--grace", type=float, default=5.0)
    s = sub.add_parser("tf-enrol")
    s.add_argument("--url", required=True)
    s.add_argument("--emails", required=True, help="comma-separated")
    s.add_argument("--password", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("tf-probe")
    s.add_argument("--urls", required=True)
    s.add_argument("--secrets", required=True)
    s.add_argument("--password", required=True)
    s.add_argument("--pause", type=float, default=2.0)
    s.add_argument("--stop", required=True)
    a = p.parse_args()
    {"realuser": cmd_realuser, "kill-record": cmd_kill_record, "kill-verify": cmd_kill_verify,
     "reset-token": cmd_reset_token, "pg-probe": cmd_pg_probe, "pg-analyze": cmd_pg_analyze,
     "tf-enrol": cmd_tf_enrol, "tf-probe": cmd_tf_probe}[a.cmd](a)


if __name__ == "__main__":
    main()
