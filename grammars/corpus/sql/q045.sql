SELECT T1.name FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = T2.id WHERE T2.capacity > 5000
