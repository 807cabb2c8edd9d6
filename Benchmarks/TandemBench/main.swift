import Tandem
print("bench")
