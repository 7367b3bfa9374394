within PlanarMechanics;
model World "The gravity field, an `inner` component every body reaches"
  parameter Real g = 9.81 "gravity acceleration (m/s2)";
  parameter Real n[2] = {0, -1} "direction of gravity (a unit vector)";
end World;
