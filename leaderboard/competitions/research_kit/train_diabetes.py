# Starter for this task: predicts disease progression from age and sex alone with a linear model.
# It writes submission.csv (columns id, progression) for test.csv into the current directory.
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import train_test_split

train_data = pd.read_csv("train.csv")
y = train_data.progression

# You can change the features and the model to do better
features = ["age", "sex"]
X = train_data[features]
train_X, valid_X, train_y, valid_y = train_test_split(X, y, random_state=1)

model = LinearRegression()
model.fit(train_X, train_y)
print(f"Train MAE: {mean_absolute_error(train_y, model.predict(train_X)):,.2f}")
print(f"Validation MAE: {mean_absolute_error(valid_y, model.predict(valid_X)):,.2f}")

test_data = pd.read_csv("test.csv")
output = pd.DataFrame({"id": test_data.id, "progression": model.predict(test_data[features])})
output.to_csv("submission.csv", index=False)
