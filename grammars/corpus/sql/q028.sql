SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id ORDER BY n DESC
