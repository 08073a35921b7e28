SELECT s.name FROM students s LEFT JOIN enrollments e ON s.id = e.student_id WHERE e.id IS NULL
