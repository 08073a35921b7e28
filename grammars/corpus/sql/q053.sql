SELECT id FROM events WHERE kind = 'click' GROUP BY id HAVING count(*) >= 3 ORDER BY id
