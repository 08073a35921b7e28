SELECT x + y * 2 FROM points
