logout-title = Abmelden
logout-question = Möchten Sie sich abmelden?
logout-submit = Abmelden
logout-cancel = Angemeldet bleiben
