/** One `<option>` per value of a record of labels (statuses, priorities), in the record's order. */
export function LabelledOptions<T extends string>({
  labels,
}: {
  labels: Readonly<Record<T, string>>;
}) {
  return (
    <>
      {(Object.keys(labels) as T[]).map((value) => (
        <option key={value} value={value}>
          {labels[value]}
        </option>
      ))}
    </>
  );
}
