changePassword-title = Neues Passwort wählen
changePassword-why = Ihr Passwort ist anderswo bei einem Datenleck bekannt geworden; andere könnten es kennen. Wählen Sie ein neues, um fortzufahren.
changePassword-hint = Mindestens { $min } Zeichen, nirgends sonst verwendet. Einige unzusammenhängende Wörter ergeben ein starkes Passwort.
changePassword-password = Neues Passwort
changePassword-confirmation = Neues Passwort wiederholen
changePassword-submit = Speichern und fortfahren
changePassword-logout = Stattdessen abmelden
