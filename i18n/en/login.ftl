login-title = Sign in
login-email = Email
login-password = Password
login-remember = Keep me signed in
login-submit = Sign in
login-forgot = Forgot your password?
