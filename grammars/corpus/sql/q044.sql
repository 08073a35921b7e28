SELECT name FROM stadium WHERE capacity > (SELECT avg(capacity) FROM stadium)
