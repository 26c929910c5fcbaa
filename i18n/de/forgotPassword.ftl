forgotPassword-title = Passwort vergessen?
forgotPassword-intro = Geben Sie die Adresse Ihres Kontos ein; wir senden Ihnen einen Link, mit dem Sie ein neues Passwort wählen.
forgotPassword-email = E-Mail
forgotPassword-submit = Link senden
forgotPassword-back = Zurück zur Anmeldung
