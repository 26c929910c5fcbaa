setPassword-title = Neues Passwort wählen
setPassword-hint = Mindestens { $min } Zeichen. Einige unzusammenhängende Wörter ergeben ein starkes Passwort.
setPassword-password = Neues Passwort
setPassword-confirmation = Neues Passwort wiederholen
setPassword-submit = Passwort speichern
