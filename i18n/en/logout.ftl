logout-title = Sign out
logout-question = Do you want to sign out?
logout-submit = Sign out
logout-cancel = Stay signed in
