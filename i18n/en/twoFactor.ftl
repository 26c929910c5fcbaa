twoFactor-title = Two-factor sign-in
twoFactor-intro = Enter the code your authenticator app shows for this account.
twoFactor-code = Code
twoFactor-use_recovery_code = Use a recovery code instead
twoFactor-recovery_code = Recovery code
twoFactor-submit = Continue
twoFactor-start_over = Start over
