-- wrk script of bench/batch.sh; what it sends is read from files named in
-- the environment:
--   BATCH_BODY=<file> BATCH_TYPE=<content type>: every request is
--     POST <the URL given to wrk> with that body (a $batch of 10 pages);
--     BATCH_CHECK=1 also reads every answer and counts its parts and the
--     parts whose status is not 200 (multipart: each "HTTP/1.1 <status>"
--     line; JSON: each "status":<status>), printed at the end as
--     "batch parts: N, not 200: M" (bench/batch.sh sets it for the warm-up
--     runs only, so that the measured runs do not pay for reading bodies
--     in Lua).
--   BATCH_URLS=<file>: GET of each path of the file (one a line, e.g.
--     /odata/Items?$top=20) in turn: each wrk thread hands them out one
--     after the other to its connections, starting at another line, so
--     that every path is requested as often as the others (to within one
--     per thread).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("index", #threads)
end

local function slurp(path)
  local f = assert(io.open(path, "rb"), "cannot open " .. path)
  local text = f:read("*a")
  f:close()
  return text
end

local body_file, urls_file = os.getenv("BATCH_BODY"), os.getenv("BATCH_URLS")
local check = os.getenv("BATCH_CHECK") == "1"
local requests, n, i = {}, 0, 0

if body_file then
  wrk.method = "POST"
  wrk.body = slurp(body_file)
  wrk.headers["Content-Type"] = assert(os.getenv("BATCH_TYPE"), "BATCH_TYPE is not set")
  parts, bad = 0, 0
  if check then
    local json = wrk.headers["Content-Type"]:find("json", 1, true) ~= nil
    local pattern = json and '"status":(%d+)' or "\r\nHTTP/1%.1 (%d+)"
    function response(status, headers, body)
      if status ~= 200 then
        bad = bad + 1 -- the whole batch refused: wrk counts it as non-2xx too
        return
      end
      for code in body:gmatch(pattern) do
        parts = parts + 1
        if code ~= "200" then bad = bad + 1 end
      end
    end
  end
elseif urls_file then
  function init(args)
    for line in slurp(urls_file):gmatch("[^\n]+") do
      n = n + 1
      requests[n] = wrk.format("GET", line)
    end
    assert(n > 0, "no paths in " .. urls_file)
    i = (index or 1) - 1
  end
  function request()
    i = i % n + 1
    return requests[i]
  end
else
  error("set BATCH_BODY and BATCH_TYPE, or BATCH_URLS")
end

function done(summary, latency, requests)
  if body_file and check then
    local p, b = 0, 0
    for _, t in ipairs(threads) do
      p = p + (t:get("parts") or 0)
      b = b + (t:get("bad") or 0)
    end
    io.write(string.format("batch parts: %d, not 200: %d\n", p, b))
  end
end
