"""What the app and the command line train and compare: a run with its settings, the
comparison with PCA and LDA, demonstration starts and the toy set. No UI code."""
