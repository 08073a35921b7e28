SELECT max(age), min(age) FROM people
