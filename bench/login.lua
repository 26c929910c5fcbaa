-- wrk: sign in with valid credentials, as fast as the server allows.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"email":"bench@example.org","password":"correct horse battery staple"}'
