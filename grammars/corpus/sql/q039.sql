SELECT id, -balance FROM accounts
