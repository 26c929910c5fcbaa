setPassword-title = Choose a new password
setPassword-hint = At least { $min } characters. A few unrelated words make a strong password.
setPassword-password = New password
setPassword-confirmation = Repeat the new password
setPassword-submit = Save password
