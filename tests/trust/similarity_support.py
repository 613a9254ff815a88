"""Code for the similarity tests (no tests here): one solution to spaceship-titanic, a copy of it with
every name changed and new comments, and an independent solution that starts with the same imports
and the same reading and writing of files, as most solutions to one task do."""

from __future__ import annotations

import itertools

from leaderboard.models import Agent, Artifact, Competition, Experiment, LanguageModel, Run

ORIGINAL = '''
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.metrics import accuracy_score

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")

# Split the cabin into deck / number / side
def add_features(df):
    df = df.copy()
    parts = df["Cabin"].fillna("U/0/U").str.split("/", expand=True)
    df["Deck"], df["CabinNum"], df["Side"] = parts[0], parts[1].astype(float), parts[2]
    spend = ["RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck"]
    df[spend] = df[spend].fillna(0)
    df["TotalSpend"] = df[spend].sum(axis=1)
    df["NoSpend"] = (df["TotalSpend"] == 0).astype(int)
    df["Group"] = df["PassengerId"].str.split("_").str[0].astype(int)
    df["GroupSize"] = df.groupby("Group")["Group"].transform("count")
    for col in ["HomePlanet", "Destination", "Deck", "Side"]:
        df[col] = df[col].fillna("missing").astype("category").cat.codes
    df["CryoSleep"] = df["CryoSleep"].fillna(False).astype(int)
    df["VIP"] = df["VIP"].fillna(False).astype(int)
    df["Age"] = df["Age"].fillna(df["Age"].median())
    return df.drop(columns=["Cabin", "Name", "PassengerId"])

X = add_features(train.drop(columns=["Transported"]))
y = train["Transported"].astype(int)
X_test = add_features(test)

import lightgbm as lgb
params = {"objective": "binary", "learning_rate": 0.03, "num_leaves": 31, "feature_fraction": 0.8,
          "bagging_fraction": 0.8, "bagging_freq": 1, "verbose": -1}
X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.2, random_state=42)
booster = lgb.train(params, lgb.Dataset(X_tr, y_tr), num_boost_round=2000,
                    valid_sets=[lgb.Dataset(X_va, y_va)], callbacks=[lgb.early_stopping(100)])
pred = booster.predict(X_va, num_iteration=booster.best_iteration)
print("validation accuracy", accuracy_score(y_va, pred > 0.5))
final = booster.predict(X_test, num_iteration=booster.best_iteration)

submission = pd.DataFrame({"PassengerId": test["PassengerId"], "Transported": final > 0.5})
submission.to_csv("/home/submission/submission.csv", index=False)
'''

COPY = '''
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.metrics import accuracy_score

# load everything
train_df = pd.read_csv("/home/data/train.csv")
test_df = pd.read_csv("/home/data/test.csv")


def engineer(frame):
    """Feature engineering."""
    frame = frame.copy()
    pieces = frame["Cabin"].fillna("X/0/X").str.split("/", expand=True)
    frame["D"], frame["N"], frame["S"] = pieces[0], pieces[1].astype(float), pieces[2]
    money = ["RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck"]
    frame[money] = frame[money].fillna(0)   # nobody spent => 0
    frame["Total"] = frame[money].sum(axis=1)
    frame["Zero"] = (frame["Total"] == 0).astype(int)
    frame["G"] = frame["PassengerId"].str.split("_").str[0].astype(int)
    frame["GS"] = frame.groupby("G")["G"].transform("count")
    for c in ["HomePlanet", "Destination", "D", "S"]:
        frame[c] = frame[c].fillna("na").astype("category").cat.codes
    frame["CryoSleep"] = frame["CryoSleep"].fillna(False).astype(int)
    frame["VIP"] = frame["VIP"].fillna(False).astype(int)
    frame["Age"] = frame["Age"].fillna(frame["Age"].median())
    return frame.drop(columns=["Cabin", "Name", "PassengerId"])

features = engineer(train_df.drop(columns=["Transported"]))
target = train_df["Transported"].astype(int)
features_test = engineer(test_df)

import lightgbm as lgb
cfg = {"objective": "binary", "learning_rate": 0.05, "num_leaves": 63, "feature_fraction": 0.9,
       "bagging_fraction": 0.7, "bagging_freq": 1, "verbose": -1}
a, b, c, d = train_test_split(features, target, test_size=0.25, random_state=0)
model = lgb.train(cfg, lgb.Dataset(a, c), num_boost_round=3000,
                  valid_sets=[lgb.Dataset(b, d)], callbacks=[lgb.early_stopping(50)])
p = model.predict(b, num_iteration=model.best_iteration)
print("acc:", accuracy_score(d, p > 0.5))
out = model.predict(features_test, num_iteration=model.best_iteration)

sub = pd.DataFrame({"PassengerId": test_df["PassengerId"], "Transported": out > 0.5})
sub.to_csv("/home/submission/submission.csv", index=False)
'''

INDEPENDENT = '''
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.metrics import accuracy_score
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.impute import SimpleImputer
from sklearn.ensemble import HistGradientBoostingClassifier

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")

numeric = ["Age", "RoomService", "FoodCourt", "ShoppingMall", "Spa", "VRDeck"]
categorical = ["HomePlanet", "CryoSleep", "Destination", "VIP"]


class CabinSplitter:
    """Deck and side from the cabin string."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        out = X.copy()
        cabin = out.pop("Cabin").fillna("")
        out["deck"] = [c.split("/")[0] if c else "none" for c in cabin]
        out["side"] = [c.split("/")[-1] if c else "none" for c in cabin]
        return out


prep = ColumnTransformer([
    ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
    ("cat", make_pipeline(SimpleImputer(strategy="most_frequent"), OneHotEncoder(handle_unknown="ignore")),
     categorical + ["deck", "side"]),
])
clf = make_pipeline(CabinSplitter(), prep, HistGradientBoostingClassifier(max_iter=300, learning_rate=0.1))

X = train.drop(columns=["Transported", "Name", "PassengerId"])
y = train["Transported"]
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=42)
clf.fit(X_train, y_train)
print("valid accuracy", accuracy_score(y_valid, clf.predict(X_valid)))
clf.fit(X, y)
labels = clf.predict(test.drop(columns=["Name", "PassengerId"]))

submission = pd.DataFrame({"PassengerId": test["PassengerId"], "Transported": labels})
submission.to_csv("/home/submission/submission.csv", index=False)
'''


_AGENTS = itertools.count(1)


def make_run(competition: Competition, *, owner=None, is_private: bool = False, agent: str | None = None) -> Run:
    """A run of its own experiment (its own agent), or of `agent`'s, which runs naming it share: the
    seeds of one experiment are never flagged as copies of each other."""
    agent = agent or f"agent-{next(_AGENTS)}"
    a, _ = Agent.objects.get_or_create(name=agent, version="1")
    model, _ = LanguageModel.objects.get_or_create(name="model")
    experiment, _ = Experiment.objects.get_or_create(agent=a, model=model, name=f"{agent} similarity tests")
    return Run.objects.create(experiment=experiment, competition=competition, owner=owner, is_private=is_private)


def add_code(run: Run, name: str, code: str) -> Artifact:
    from django.core.files.base import ContentFile

    artifact = Artifact(run=run, kind=Artifact.Kind.CODE, name=name, size=len(code.encode()))
    artifact.file.save(name.rsplit("/", 1)[-1], ContentFile(code.encode()), save=True)
    return artifact
