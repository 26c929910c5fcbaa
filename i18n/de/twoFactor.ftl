twoFactor-title = Anmeldung in zwei Schritten
twoFactor-intro = Geben Sie den Code ein, den Ihre Authenticator-App für dieses Konto anzeigt.
twoFactor-code = Code
twoFactor-use_recovery_code = Stattdessen einen Wiederherstellungscode verwenden
twoFactor-recovery_code = Wiederherstellungscode
twoFactor-submit = Weiter
twoFactor-start_over = Neu beginnen
