def f():
	if x:
        pass
	return 1