forgotPassword-title = Forgot your password?
forgotPassword-intro = Enter the address of your account and we will mail you a link to choose a new password.
forgotPassword-email = Email
forgotPassword-submit = Send reset link
forgotPassword-back = Back to sign in
