SELECT upper(code) AS c FROM countries WHERE length(code) = 2
