login-title = Anmelden
login-email = E-Mail
login-password = Passwort
login-remember = Angemeldet bleiben
login-submit = Anmelden
login-forgot = Passwort vergessen?
login-or = oder
login-passkey = Mit einem Passkey anmelden
