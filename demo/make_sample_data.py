"""Write demo/data/housing.csv: a small, deterministic, housing-like data set for the Notebook-BCC demo.

Standard library only. Run from anywhere: ``python3 demo/make_sample_data.py``. The same seed always
gives the same file, byte for byte, so the committed CSV can be regenerated and compared.
"""

import csv
import datetime
import random
from pathlib import Path

SEED = 20240601
ROWS = 400
OUT = Path(__file__).resolve().parent / "data" / "housing.csv"

NEIGHBORHOODS = {
    # name: (price multiplier, share of rows)
    "NorthRidge": (1.45, 0.08),
    "StoneBrook": (1.30, 0.07),
    "Timberland": (1.15, 0.12),
    "CollegeCreek": (1.05, 0.16),
    "Gilbert": (1.00, 0.14),
    "Sawyer": (0.88, 0.15),
    "OldTown": (0.78, 0.16),
    "Edwards": (0.75, 0.12),
}
ZONING = [("RL", 0.75), ("RM", 0.15), ("FV", 0.05), ("RH", 0.03), ("C (all)", 0.02)]
KITCHEN = ["Fa", "TA", "Gd", "Ex"]
SALE_CONDITION = [("Normal", 0.82), ("Partial", 0.08), ("Abnorml", 0.07), ("Family", 0.03)]
GARAGE_TYPES = [("Attchd", 0.62), ("Detchd", 0.28), ("BuiltIn", 0.07), ("CarPort", 0.03)]
HOUSE_STYLE = [("1Story", 0.5), ("2Story", 0.32), ("1.5Fin", 0.12), ("SLvl", 0.06)]

COLUMNS = [
    "Id",
    "MSZoning",
    "Neighborhood",
    "HouseStyle",
    "LotArea",
    "LotFrontage",
    "OverallQual",
    "OverallCond",
    "YearBuilt",
    "YearRemodAdd",
    "GrLivArea",
    "TotalBsmtSF",
    "BedroomAbvGr",
    "FullBath",
    "KitchenQual",
    "CentralAir",
    "Fireplaces",
    "GarageType",
    "GarageCars",
    "GarageArea",
    "MasVnrArea",
    "PoolQC",
    "SaleDate",
    "SaleCondition",
    "SalePrice",
]


def weighted(rng, choices):
    names = [name for name, _ in choices]
    weights = [weight for _, weight in choices]
    return rng.choices(names, weights=weights, k=1)[0]


def make_row(rng, index):
    neighborhood = weighted(rng, [(n, share) for n, (_, share) in NEIGHBORHOODS.items()])
    multiplier = NEIGHBORHOODS[neighborhood][0]
    quality = max(1, min(10, round(rng.gauss(6 + (multiplier - 1) * 6, 1.4))))
    year_built = max(1880, min(2009, round(rng.gauss(1972 + (multiplier - 1) * 60, 25))))
    year_remod = year_built if rng.random() < 0.55 else rng.randint(year_built, 2010)
    style = weighted(rng, HOUSE_STYLE)
    living = round(rng.gauss(1100 + quality * 90 + (400 if style == "2Story" else 0), 320))
    living = max(520, living)
    basement = 0 if rng.random() < 0.04 else max(0, round(living * rng.uniform(0.55, 1.05)))
    bedrooms = max(1, min(6, round(living / 520 + rng.gauss(0, 0.7))))
    baths = max(1, min(4, round(living / 900 + rng.gauss(0, 0.4))))
    has_garage = rng.random() > 0.06
    garage_cars = max(1, min(4, round(quality / 3 + rng.gauss(0, 0.6)))) if has_garage else 0
    garage_area = round(garage_cars * rng.uniform(230, 300)) if has_garage else 0
    kitchen = KITCHEN[max(0, min(3, round((quality - 2) / 2.6 + rng.gauss(0, 0.5))))]
    fireplaces = max(0, min(3, round(rng.gauss(quality / 8, 0.6))))
    central_air = "Y" if rng.random() < (0.97 if year_built > 1950 else 0.7) else "N"
    sold = datetime.date(2006, 1, 1) + datetime.timedelta(days=rng.randint(0, 365 * 4 + 180))
    lot_area = max(1300, round(rng.lognormvariate(9.15, 0.35)))
    lot_frontage = round(lot_area ** 0.5 * rng.uniform(0.55, 0.85))
    veneer = 0 if rng.random() < 0.55 else round(rng.uniform(40, 600))
    condition = weighted(rng, SALE_CONDITION)

    price = (
        18000
        + living * 62
        + basement * 18
        + quality**2 * 1650
        + garage_cars * 7200
        + fireplaces * 4200
        + (year_remod - 1950) * 380
        + (12000 if central_air == "Y" else 0)
        + KITCHEN.index(kitchen) * 6500
    ) * multiplier
    if condition == "Abnorml":
        price *= 0.82
    elif condition == "Partial":
        price *= 1.08
    price *= rng.lognormvariate(0, 0.09)

    row = {
        "Id": index + 1,
        "MSZoning": weighted(rng, ZONING),
        "Neighborhood": neighborhood,
        "HouseStyle": style,
        "LotArea": lot_area,
        "LotFrontage": lot_frontage,
        "OverallQual": quality,
        "OverallCond": max(1, min(9, round(rng.gauss(5.6, 1.0)))),
        "YearBuilt": year_built,
        "YearRemodAdd": year_remod,
        "GrLivArea": living,
        "TotalBsmtSF": basement,
        "BedroomAbvGr": bedrooms,
        "FullBath": baths,
        "KitchenQual": kitchen,
        "CentralAir": central_air,
        "Fireplaces": fireplaces,
        "GarageType": weighted(rng, GARAGE_TYPES) if has_garage else "",
        "GarageCars": garage_cars,
        "GarageArea": garage_area,
        "MasVnrArea": veneer,
        "PoolQC": "",
        "SaleDate": sold.isoformat(),
        "SaleCondition": condition,
        "SalePrice": int(round(price, -2)),
    }
    # Missing values the way real listings have them: unrecorded frontage, a few gaps, rare pools.
    if rng.random() < 0.17:
        row["LotFrontage"] = ""
    if rng.random() < 0.02:
        row["MasVnrArea"] = ""
    if rng.random() < 0.015:
        row["KitchenQual"] = ""
    if rng.random() < 0.01:
        row["TotalBsmtSF"] = ""
    if rng.random() < 0.012:
        row["PoolQC"] = rng.choice(["Ex", "Gd", "Fa"])
    return row


def main():
    rng = random.Random(SEED)
    rows = [make_row(rng, i) for i in range(ROWS)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows x {len(COLUMNS)} columns to {OUT}")


if __name__ == "__main__":
    main()
