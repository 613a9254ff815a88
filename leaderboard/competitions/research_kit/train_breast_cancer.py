# Starter for this task: the probability that a breast mass is malignant, from two of its 30 features
# with a logistic regression. It writes submission.csv (columns id, malignant) into the current directory.
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

train_data = pd.read_csv("train.csv")
y = train_data.malignant

# You can change the features and the model to do better
features = ["mean symmetry", "smoothness error"]
X = train_data[features]
train_X, valid_X, train_y, valid_y = train_test_split(X, y, random_state=1)

model = LogisticRegression()
model.fit(train_X, train_y)
print(f"Train ROC AUC: {roc_auc_score(train_y, model.predict_proba(train_X)[:, 1]):.4f}")
print(f"Validation ROC AUC: {roc_auc_score(valid_y, model.predict_proba(valid_X)[:, 1]):.4f}")

test_data = pd.read_csv("test.csv")
output = pd.DataFrame({"id": test_data.id, "malignant": model.predict_proba(test_data[features])[:, 1]})
output.to_csv("submission.csv", index=False)
