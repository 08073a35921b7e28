SELECT id FROM items WHERE qty < 0 OR qty > 100
