SELECT 'unterminated FROM t
