login-title = Sign in
login-email = Email
login-password = Password
login-remember = Keep me signed in
login-submit = Sign in
login-forgot = Forgot your password?
login-or = or
login-passkey = Sign in with a passkey
