SELECT title FROM books WHERE author LIKE 'A%' ORDER BY title DESC LIMIT 10
