SELECT DISTINCT T1.name FROM employee T1 JOIN evaluation T2 ON T1.id = T2.employee_id
