SELECT sum(amount) AS total FROM payments WHERE paid_at > '2024-01-01'
