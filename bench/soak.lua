-- wrk script for bench/soak.sh. SOAK_MODE selects the traffic:
--   mixed  screens, failed and successful sign-ins, sign-outs, forgot-password,
--          OData reads with a bearer token, and two-factor users' sign-ins
--          followed by wrong codes (SOAK_TF_USERS accounts tf-N), each
--          request from a random
--          client address (X-Forwarded-For, the instances trust 127.0.0.1),
--          so no throttle counts more than a few of them;
--   flood  sign-ins for unknown addresses, all from one client address
--          (SOAK_FLOOD_IP).
-- Every response is counted by status class; done() prints one line
-- "SOAK key=value ..." that soak.sh adds up over the wrk processes.
local mode = os.getenv("SOAK_MODE") or "mixed"
local token = os.getenv("SOAK_TOKEN") or ""
local users = tonumber(os.getenv("SOAK_USERS") or "50")
local password = os.getenv("SOAK_PASSWORD") or ""
local flood_ip = os.getenv("SOAK_FLOOD_IP") or "198.51.100.1"
local tf_users = tonumber(os.getenv("SOAK_TF_USERS") or "0")

local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("id", next_id)
  table.insert(threads, thread)
end

-- Per-thread counters (globals, read back by done()).
s2, s3, s4, s429, s422, s401, busy, s5, other, other2xx = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
login_ok, login_fail, logouts, forgot_ok, odata_ok, screens = 0, 0, 0, 0, 0, 0
tf_pending, tf_failed = 0, 0
samples = ""
nsamples = 0
first429, firstbusy = 0, 0
local cookies = {}
-- Sessions holding a two-factor user's pending sign-in.
local pending = {}
local json_headers, form_headers

function init(args)
  math.randomseed(os.time() * 1000 + id * 7919)
end

local function random_ip()
  return string.format("10.%d.%d.%d", math.random(0, 255), math.random(0, 255), math.random(1, 254))
end

local function json_post(path, body, ip)
  return wrk.format("POST", path, {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json",
    ["X-Forwarded-For"] = ip,
  }, body)
end

local function known_user()
  return string.format("soak-%d@example.org", math.random(1, users))
end

local function mixed_request()
  local r = math.random(1, 100)
  local ip = random_ip()
  if r <= 25 then
    return wrk.format("GET", "/login", {["X-Forwarded-For"] = ip})
  elseif r <= 37 then
    -- failed sign-in: a known address with a wrong password, or an unknown one
    local email = known_user()
    if math.random(1, 2) == 1 then
      email = string.format("nobody-%d-%d@example.org", id, math.random(1, 1000000000))
    end
    return json_post("/auth/login",
      string.format('{"email":"%s","password":"wrong password %d"}', email, math.random(1, 1000000)), ip)
  elseif r <= 49 then
    return json_post("/auth/login",
      string.format('{"email":"%s","password":"%s"}', known_user(), password), ip)
  elseif r <= 59 then
    local n = #cookies
    if n == 0 then
      return wrk.format("GET", "/login", {["X-Forwarded-For"] = ip})
    end
    local cookie = table.remove(cookies, n)
    return wrk.format("POST", "/logout", {["Cookie"] = cookie, ["X-Forwarded-For"] = ip})
  elseif r <= 70 then
    local email = known_user()
    if math.random(1, 2) == 1 then
      email = string.format("nobody-%d-%d@example.org", id, math.random(1, 1000000000))
    end
    return json_post("/auth/forgot-password", string.format('{"email":"%s"}', email), ip)
  elseif r <= 78 then
    return wrk.format("GET", "/odata/Users", {["Authorization"] = "Bearer " .. token, ["X-Forwarded-For"] = ip})
  elseif r <= 85 and tf_users > 0 then
    -- a two-factor user's password, then (on a later request) a wrong code
    -- through that pending sign-in
    local n = #pending
    if n > 0 and math.random(1, 2) == 1 then
      local cookie = table.remove(pending, n)
      return wrk.format("POST", "/auth/two-factor-challenge", {
        ["Content-Type"] = "application/json", ["Accept"] = "application/json",
        ["Cookie"] = cookie, ["X-Forwarded-For"] = ip,
      }, string.format('{"code":"%06d"}', math.random(0, 999999)))
    end
    return json_post("/auth/login",
      string.format('{"email":"tf-%d@example.org","password":"%s"}', math.random(1, tf_users), password), ip)
  elseif r <= 85 then
    return wrk.format("GET", "/odata/Users", {["Authorization"] = "Bearer " .. token, ["X-Forwarded-For"] = ip})
  else
    return wrk.format("GET", "/odata/Users?$top=5&$count=true",
      {["Authorization"] = "Bearer " .. token, ["X-Forwarded-For"] = ip})
  end
end

local function flood_request()
  return json_post("/auth/login",
    string.format('{"email":"flood-%d-%d@example.org","password":"not the password %d"}',
      id, math.random(1, 1000000000), math.random(1, 1000000)), flood_ip)
end

function request()
  if mode == "flood" then
    return flood_request()
  end
  return mixed_request()
end

local function sample(status, body)
  if nsamples < 5 then
    nsamples = nsamples + 1
    samples = samples .. string.format(" [%d %s]", status, string.sub(string.gsub(body or "", "%s+", " "), 1, 160))
  end
end

-- Keeps the session cookie a response set in `list` (at most 1000).
local function keep_session(headers, list)
  local set = headers["Set-Cookie"] or headers["set-cookie"]
  if set then
    local cookie = string.match(set, "(gatehouse_session=[^;]+)")
    if cookie and #list < 1000 then
      table.insert(list, cookie)
    end
  end
end

function response(status, headers, body)
  if status >= 200 and status < 300 then
    s2 = s2 + 1
    if string.find(body, '"message":"login_success"', 1, true) then
      login_ok = login_ok + 1
      keep_session(headers, cookies)
    elseif string.find(body, '"message":"two_factor_required"', 1, true) then
      tf_pending = tf_pending + 1
      keep_session(headers, pending)
    elseif string.find(body, '"message":"reset_link_sent"', 1, true) then
      forgot_ok = forgot_ok + 1
    elseif string.find(body, '"@odata.context"', 1, true) then
      odata_ok = odata_ok + 1
    elseif string.find(body, "<form", 1, true) then
      screens = screens + 1
    else
      other2xx = other2xx + 1
      sample(status, body)
    end
  elseif status >= 300 and status < 400 then
    s3 = s3 + 1
    logouts = logouts + 1
  elseif status == 429 then
    s429 = s429 + 1
    if first429 == 0 then first429 = os.time() end
  elseif status >= 400 and status < 500 then
    s4 = s4 + 1
    if status == 422 then
      s422 = s422 + 1
      if string.find(body, "credentials_do_not_match", 1, true) then
        login_fail = login_fail + 1
      elseif string.find(body, "two_factor_failed", 1, true) then
        tf_failed = tf_failed + 1
      end
    elseif status == 401 then
      s401 = s401 + 1
      sample(status, body)
    else
      sample(status, body)
    end
  elseif status == 503 and string.find(body, '"busy"', 1, true) then
    busy = busy + 1
    if firstbusy == 0 then firstbusy = os.time() end
  elseif status >= 500 then
    s5 = s5 + 1
    sample(status, body)
  else
    other = other + 1
    sample(status, body)
  end
end

function done(summary, latency, requests)
  local keys = {"s2", "s3", "s4", "s429", "s422", "s401", "busy", "s5", "other", "other2xx",
    "login_ok", "login_fail", "logouts", "forgot_ok", "odata_ok", "screens", "tf_pending", "tf_failed"}
  local total = {}
  for _, k in ipairs(keys) do total[k] = 0 end
  local all_samples = ""
  local f429, fbusy = 0, 0
  for _, thread in ipairs(threads) do
    local t = thread:get("first429") or 0
    if t > 0 and (f429 == 0 or t < f429) then f429 = t end
    t = thread:get("firstbusy") or 0
    if t > 0 and (fbusy == 0 or t < fbusy) then fbusy = t end
    for _, k in ipairs(keys) do
      total[k] = total[k] + (thread:get(k) or 0)
    end
    all_samples = all_samples .. (thread:get("samples") or "")
  end
  local e = summary.errors
  local line = string.format("SOAK requests=%d duration_us=%d", summary.requests, summary.duration)
  for _, k in ipairs(keys) do
    line = line .. string.format(" %s=%d", k, total[k])
  end
  line = line .. string.format(" err_connect=%d err_read=%d err_write=%d err_timeout=%d",
    e.connect, e.read, e.write, e.timeout)
  line = line .. string.format(" first429=%d firstbusy=%d", f429, fbusy)
  line = line .. string.format(" p50_ms=%.2f p99_ms=%.2f max_ms=%.2f",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000)
  print(line)
  if all_samples ~= "" then
    print("SAMPLES" .. all_samples)
  end
end
