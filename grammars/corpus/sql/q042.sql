SELECT count(DISTINCT city) FROM addresses
