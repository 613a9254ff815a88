# Starter for this task: predicts a wine's cultivar from two of its 13 measurements with a one-split tree.
# It writes submission.csv (columns id, cultivar) for test.csv into the current directory.
import pandas as pd
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

train_data = pd.read_csv("train.csv")
y = train_data.cultivar

# You can change the features and the model to do better
features = ["ash", "magnesium"]
X = train_data[features]
train_X, valid_X, train_y, valid_y = train_test_split(X, y, random_state=1)

model = DecisionTreeClassifier(max_depth=1, random_state=0)
model.fit(train_X, train_y)
print(f"Train accuracy: {accuracy_score(train_y, model.predict(train_X)):.4f}")
print(f"Validation accuracy: {accuracy_score(valid_y, model.predict(valid_X)):.4f}")

test_data = pd.read_csv("test.csv")
output = pd.DataFrame({"id": test_data.id, "cultivar": model.predict(test_data[features])})
output.to_csv("submission.csv", index=False)
