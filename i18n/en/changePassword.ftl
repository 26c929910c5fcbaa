changePassword-title = Choose a new password
changePassword-why = Your password appeared in a data breach elsewhere, so others may know it. Choose a new one to go on.
changePassword-hint = At least { $min } characters, not used anywhere else. A few unrelated words make a strong password.
changePassword-password = New password
changePassword-confirmation = Repeat the new password
changePassword-submit = Save and continue
changePassword-logout = Sign out instead
